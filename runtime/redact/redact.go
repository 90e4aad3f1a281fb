// Package redact keeps secrets (keys, tokens, Authorization values, push
// and proxy credentials) out of log lines and error messages at their
// source: a Secret prints as a mark whatever verb or encoder prints it,
// Field logs only whether a secret was set, and Scrub takes known secrets
// out of text produced elsewhere (an SDK's or an upstream's error).
package redact

import (
	"fmt"
	"strings"

	"go.uber.org/zap"
)

// Mark is what a secret prints as.
const Mark = "[redacted]"

// Secret holds a credential that must never be printed. Every way of
// printing it (fmt's verbs %v %s %q %x %#v, JSON, text, zap) gives Mark;
// Reveal is the one way to the value, for the code that uses it.
type Secret string

// Reveal returns the secret's value, to send it where it belongs.
func (s Secret) Reveal() string { return string(s) }

// String implements fmt.Stringer.
func (s Secret) String() string { return Mark }

// GoString implements fmt.GoStringer (%#v).
func (s Secret) GoString() string { return Mark }

// Format implements fmt.Formatter, so that no verb (%x, %q, %d) reaches
// the bytes.
func (s Secret) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(Mark)) }

// MarshalText implements encoding.TextMarshaler (JSON and text encoders).
func (s Secret) MarshalText() ([]byte, error) { return []byte(Mark), nil }

// Field logs whether a secret was given, never its bytes: Mark for a set
// value, "" for an empty one.
func Field(key, value string) zap.Field {
	if value == "" {
		return zap.String(key, "")
	}
	return zap.String(key, Mark)
}

// Scrub returns s with every occurrence of each non-empty secret replaced
// by Mark. Secrets shorter than 4 bytes are not looked for: they would
// blank ordinary words, and no credential this project issues is that
// short. Longer secrets are replaced first, so one that contains another
// is taken whole.
func Scrub(s string, secrets ...string) string {
	var list []string
	for _, x := range secrets {
		if len(x) >= 4 {
			list = append(list, x)
		}
	}
	if len(list) == 0 {
		return s
	}
	// Longest first: a token containing a shorter one goes whole.
	for i := 1; i < len(list); i++ {
		for j := i; j > 0 && len(list[j]) > len(list[j-1]); j-- {
			list[j], list[j-1] = list[j-1], list[j]
		}
	}
	for _, x := range list {
		s = strings.ReplaceAll(s, x, Mark)
	}
	return s
}

// Contains reports whether s holds any of the non-empty secrets (a test's
// and a guard's check).
func Contains(s string, secrets ...string) bool {
	for _, x := range secrets {
		if x != "" && strings.Contains(s, x) {
			return true
		}
	}
	return false
}
