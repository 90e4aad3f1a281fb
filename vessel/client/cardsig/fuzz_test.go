package cardsig_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/astraldeep/astralvessel-go/vessel/client/cardsig"
)

// FuzzCanonical: any bytes either are refused, without a panic, or give a
// canonical form that is valid JSON and is its own canonical form; a
// duplicate-member refusal only comes for a document with members.
func FuzzCanonical(f *testing.F) {
	for _, s := range []string{
		`{"name":"a","skills":[{"id":"x"}],"n":1.50}`,
		`{"name":"a","name":"b"}`,
		`{"a":{"b":1,"b":2}}`,
		`{"signatures":[],"z":"\u2028<>&"}`,
		`[1,2]`, `{"a":1} {}`, `{"a":[[[[]]]]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		out, err := cardsig.Canonical(doc)
		if errors.Is(err, cardsig.ErrDuplicateMember) {
			var m map[string]any
			if json.Unmarshal(doc, &m) == nil && json.Valid(doc) && bytes.Count(doc, []byte(":")) == 0 {
				t.Fatalf("duplicate refused in a document without members: %q", doc)
			}
			return
		}
		if err != nil {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("canonical form is not JSON: %q", out)
		}
		again, err := cardsig.Canonical(out)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("canonical form not stable: %q -> %q (%v)", out, again, err)
		}
	})
}
