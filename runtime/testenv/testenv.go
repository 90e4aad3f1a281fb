// Package testenv holds the guard tests use for what the host must provide
// (root, a kernel feature, a database): missing locally, the test skips;
// missing under CI (env CI=true), it fails, so CI never passes by skipping.
package testenv

import (
	"os"
	"testing"
)

// CI reports whether the tests run under CI (env CI=true).
func CI() bool { return os.Getenv("CI") == "true" }

// Require skips t when ok is false, or fails it under CI. why says what is
// missing.
func Require(t testing.TB, ok bool, why string) {
	t.Helper()
	if ok {
		return
	}
	if CI() {
		t.Fatalf("%s (required under CI)", why)
	}
	t.Skip(why)
}
