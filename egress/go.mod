module github.com/astraldeep/astralvessel-go/egress

go 1.26.0

require (
	github.com/astraldeep/astralvessel-go/deployer v0.0.0-00010101000000-000000000000
	github.com/elazarl/goproxy v1.9.4
	go.uber.org/zap v1.28.0
)

require (
	github.com/pelletier/go-toml/v2 v2.4.3 // indirect
	go.uber.org/multierr v1.10.0 // indirect
	golang.org/x/net v0.61.0 // indirect
	golang.org/x/text v0.44.0 // indirect
)

replace (
	github.com/astraldeep/astralvessel-go/deployer => ../deployer
	github.com/astraldeep/astralvessel-go/vessel/client => ../vessel/client
)
