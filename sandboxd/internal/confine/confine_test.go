package confine

import (
	"bytes"
	"testing"
)

func TestBuildFilter(t *testing.T) {
	bpf, err := BuildFilter()
	if err != nil {
		t.Fatal(err)
	}
	if len(bpf) == 0 || len(bpf)%8 != 0 {
		t.Fatalf("filter of %d bytes", len(bpf))
	}
}

func TestSpecEncode(t *testing.T) {
	s := Spec{Path: "/bin/true", Argv: []string{"true"}, Env: []string{"A=1"}, ReadOnly: []string{"/usr"},
		ReadWrite: []string{"/w"}, Limits: Limits{NoFile: 4096}, Filter: make([]byte, 16)}
	b, err := s.encode()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("SBXL1\x00")) || !bytes.Contains(b, []byte("/bin/true\x00")) {
		t.Fatalf("encoding %q", b)
	}
	s.Argv = []string{"a\x00b"}
	if _, err := s.encode(); err == nil {
		t.Fatal("NUL in argv accepted")
	}
}
