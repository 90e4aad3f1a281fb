module github.com/astraldeep/astralvessel-go/deployer

go 1.26.0

require (
	github.com/a2aproject/a2a-go/v2 v2.4.0
	github.com/astraldeep/astralvessel-go/vessel/client v0.0.0
	github.com/pelletier/go-toml/v2 v2.4.3
	go.yaml.in/yaml/v3 v3.0.6
)

require (
	github.com/google/uuid v1.6.0 // indirect
	golang.org/x/mod v0.35.0 // indirect
	golang.org/x/sync v0.20.0 // indirect
)

replace github.com/astraldeep/astralvessel-go/vessel/client => ../vessel/client
