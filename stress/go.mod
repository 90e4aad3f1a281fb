module github.com/astraldeep/astralvessel-go/stress

go 1.26.0
