module github.com/astraldeep/astralvessel-go/deployer

go 1.26.0

require (
	github.com/pelletier/go-toml/v2 v2.4.3 // indirect
	go.uber.org/multierr v1.10.0 // indirect
	go.uber.org/zap v1.28.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)
