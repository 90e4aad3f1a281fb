// A planted violation: an egress that links deployer/spec and vessel/loop.
package main

import (
	"github.com/astraldeep/astralvessel-go/deployer/spec"
	"github.com/astraldeep/astralvessel-go/vessel/loop"
)

func main() { _, _ = spec.Name, loop.Name }
