// Package fromspec stands in for vessel/internal/fromspec: allowed to
// import deployer/spec.
package fromspec

import "github.com/astraldeep/astralvessel-go/deployer/spec"

// Name is the stand-in's.
const Name = spec.Name
