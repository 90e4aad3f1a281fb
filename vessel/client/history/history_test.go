package history

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/astraldeep/astralvessel-go/vessel/client"
)

func TestAppendLoad(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(filepath.Join(dir, "h"))
	if err != nil {
		t.Fatal(err)
	}
	if msgs, err := s.Messages("conv:1"); err != nil || len(msgs) != 0 {
		t.Fatalf("empty: %v %v", msgs, err)
	}
	if err := s.Append("conv:1", "birds", client.UserMessage("hi"), client.Message{"role": "assistant", "content": "yo", "n": 2}); err != nil {
		t.Fatal(err)
	}
	if err := s.Append("conv:1", "", client.UserMessage("again")); err != nil {
		t.Fatal(err)
	}
	c, err := s.Load("conv:1")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Messages) != 3 || c.Agent != "birds" || c.Messages[1]["n"] != 2 || c.Messages[2].Text() != "again" {
		t.Errorf("loaded %+v", c)
	}
	// A reopened store sees the same file; no temp files are left behind.
	s2, _ := Open(filepath.Join(dir, "h"))
	if m, _ := s2.Messages("conv:1"); len(m) != 3 {
		t.Errorf("reopened: %d messages", len(m))
	}
	ents, _ := os.ReadDir(filepath.Join(dir, "h"))
	if len(ents) != 1 {
		t.Errorf("files: %v", ents)
	}
	if err := s.Delete("conv:1"); err != nil {
		t.Fatal(err)
	}
	if m, _ := s.Messages("conv:1"); len(m) != 0 {
		t.Errorf("after delete: %v", m)
	}
}

func TestBadIDs(t *testing.T) {
	s, _ := Open(t.TempDir())
	for _, id := range []string{"", "..", "a/b", "a b", string(make([]byte, 129))} {
		if err := s.Append(id, "", client.UserMessage("x")); err == nil {
			t.Errorf("accepted id %q", id)
		}
	}
}

func TestConcurrentAppends(t *testing.T) {
	s, _ := Open(t.TempDir())
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.Append("c", "", client.UserMessage("x")); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if m, _ := s.Messages("c"); len(m) != 20 {
		t.Errorf("%d messages", len(m))
	}
}
