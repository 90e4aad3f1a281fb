module github.com/astraldeep/astralvessel-go/vessel

go 1.26.0

require github.com/astraldeep/astralvessel-go/deployer v0.0.0-00010101000000-000000000000

replace github.com/astraldeep/astralvessel-go/deployer => ../deployer
