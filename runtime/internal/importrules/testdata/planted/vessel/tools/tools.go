// Package tools is a planted violation: a vessel package other than
// fromspec importing deployer/spec.
package tools

import "github.com/astraldeep/astralvessel-go/deployer/spec"

// Name is the stand-in's.
const Name = spec.Name
