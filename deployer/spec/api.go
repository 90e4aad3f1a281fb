package spec

import (
	"github.com/astraldeep/astralvessel-go/runtime/bytesize"
	"github.com/astraldeep/astralvessel-go/runtime/tokens"
)

// This file gives the package's API over shared runtime values (sizes,
// derived tokens) that the deployer and vessel/internal/fromspec use.

// Env looks up an environment variable; os.LookupEnv fits.
type Env func(name string) (string, bool)

// ByteSize is a size in bytes (runtime/bytesize, which the services'
// flags share).
type ByteSize = bytesize.Size

// ParseByteSize is bytesize.Parse.
func ParseByteSize(s string) (ByteSize, error) { return bytesize.Parse(s) }

// DeriveToken derives a per-purpose secret from a master secret, so the
// deployer writes one master token for the vessel and each sandbox gets only
// its own: DeriveToken(master, "sandbox/"+agentID).
func DeriveToken(master, label string) string { return tokens.DeriveToken(master, label) }
