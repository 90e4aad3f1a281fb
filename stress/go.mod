module github.com/astraldeep/astralvessel-go/stress

go 1.26.0

require (
	github.com/a2aproject/a2a-go/v2 v2.4.0
	github.com/astraldeep/astralvessel-go/deployer v0.0.0-00010101000000-000000000000
	github.com/astraldeep/astralvessel-go/vessel/client v0.0.0
)

require (
	github.com/google/uuid v1.6.0 // indirect
	github.com/pelletier/go-toml/v2 v2.4.3 // indirect
	golang.org/x/mod v0.35.0 // indirect
)

replace (
	github.com/astraldeep/astralvessel-go/deployer => ../deployer
	github.com/astraldeep/astralvessel-go/vessel/client => ../vessel/client
)
