module github.com/astraldeep/astralvessel-go/egress

go 1.26.0

require (
	github.com/elazarl/goproxy v1.9.4
	go.uber.org/zap v1.28.0
)

require (
	go.uber.org/multierr v1.10.0 // indirect
	golang.org/x/net v0.50.0 // indirect
	golang.org/x/text v0.34.0 // indirect
)
