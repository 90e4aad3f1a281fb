module github.com/astraldeep/astralvessel-go/deployer

go 1.26.0
