//go:build tools

// Package tools pins gVisor's runsc for deploy/gvisor-runtime.sh, which builds
// it with -mod=readonly from this go.mod and go.sum. A module of its own, kept
// out of go.work and the Makefile's MODULES: only the script builds it.
package tools

import _ "gvisor.dev/gvisor/runsc"
