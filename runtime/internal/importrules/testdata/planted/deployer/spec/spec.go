// Package spec stands in for deployer/spec.
package spec

// Name is used by the planted egress.
const Name = "spec"
