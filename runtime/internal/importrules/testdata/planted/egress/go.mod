module github.com/astraldeep/astralvessel-go/egress

go 1.26.0

require (
	github.com/astraldeep/astralvessel-go/deployer v0.0.0-00010101000000-000000000000
	github.com/astraldeep/astralvessel-go/vessel v0.0.0-00010101000000-000000000000
)

replace (
	github.com/astraldeep/astralvessel-go/deployer => ../deployer
	github.com/astraldeep/astralvessel-go/vessel => ../vessel
)
