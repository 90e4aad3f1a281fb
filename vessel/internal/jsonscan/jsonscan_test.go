package jsonscan

import (
	"encoding/json"
	"testing"
)

// FuzzSkip checks that Skip accepts only what json.Valid accepts.
func FuzzSkip(f *testing.F) {
	for _, s := range []string{`{"a":[1,-2.5e+3,true,false,null,"x\u00e9\n"]}`, `01`, `"\x"`, `[1,]`, `{"a" 1}`, `-`, `1.`, `1e`, "\"\x01\"", ` {} `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var s Scanner
		s.Reset(b)
		if s.Skip() && s.End() && !json.Valid(b) {
			t.Fatalf("accepted invalid JSON %q", b)
		}
	})
}

func TestFieldsFirst(t *testing.T) {
	var f Fields
	if !f.First(1) || !f.First(4) {
		t.Fatal("a key seen for the first time was refused")
	}
	if f.First(1) || f.First(4) {
		t.Fatal("a duplicate key was accepted")
	}
	if !f.First(2) {
		t.Fatal("an unseen key was refused after others")
	}
}
