module github.com/astraldeep/astralvessel-go/vessel

go 1.26.0
