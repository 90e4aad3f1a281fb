// Package tokens derives the per-purpose secrets of a deployment from its
// master tokens; deploy and the services compute the same values.
package tokens

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
)

// DeriveToken derives a per-purpose secret from a master secret, so the
// deployer writes one master token for the vessel and each sandbox gets only
// its own: DeriveToken(master, "sandbox/"+agentID).
func DeriveToken(master, label string) string {
	m := hmac.New(sha256.New, []byte(master))
	m.Write([]byte(label))
	return hex.EncodeToString(m.Sum(nil))
}
