package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestUsage(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"http://x"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "usage") {
		t.Errorf("code %d, stderr %q", code, errb.String())
	}
	if code := run([]string{"http://x", "k", "a", "--only", "("}, &out, &errb); code != 2 {
		t.Errorf("bad regexp: code %d", code)
	}
}
