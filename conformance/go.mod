module github.com/astraldeep/astralvessel-go/conformance

go 1.26.0
