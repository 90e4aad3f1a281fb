module github.com/astraldeep/astralvessel-go/ci-tools

go 1.26.0
