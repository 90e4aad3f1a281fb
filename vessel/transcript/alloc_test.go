package transcript

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unsafe"
)

func TestIsEmpty(t *testing.T) {
	for c, want := range map[string]bool{
		"": true, "null": true, `""`: true, "[]": true, " \n null\t": true, ` "" `: true, " [] ": true,
		`" "`: false, "[ ]": false, `"x"`: false, "nul": false, "nulll": false, `[{"type":"text","text":""}]`: false, "0": false,
	} {
		if got := isEmpty(json.RawMessage(c)); got != want {
			t.Errorf("isEmpty(%q) = %v", c, got)
		}
	}
	c := json.RawMessage(`"` + strings.Repeat("a long content, ", 20) + `"`) // too long for a conversion on the stack
	if a := testing.AllocsPerRun(100, func() { isEmpty(c) }); a != 0 {
		t.Fatalf("%v allocations", a)
	}
}

// within reports whether s lies in b's memory.
func within(s, b []byte) bool {
	if len(s) == 0 || len(b) == 0 {
		return false
	}
	p, lo := uintptr(unsafe.Pointer(unsafe.SliceData(s))), uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return p >= lo && p+uintptr(len(s)) <= lo+uintptr(len(b))
}

// TestParseSharesContents: the scanner's contents are b's bytes, capped so
// that an append copies them instead of writing into b.
func TestParseSharesContents(t *testing.T) {
	b := []byte(`{"version":1,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"text","text":"yo"}]},{"role":"user","content":"bye"}]}`)
	orig := bytes.Clone(b)
	env, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range env.Messages {
		if !within(m.Content, b) || cap(m.Content) != len(m.Content) {
			t.Fatalf("message %d: content %q not a capped slice of the input", i, m.Content)
		}
		_ = append(m.Content, "xxxxxxxx"...)
	}
	if !bytes.Equal(b, orig) {
		t.Fatalf("the input changed: %s", b)
	}
	if string(env.Messages[0].Content) != `"hi"` || string(env.Messages[2].Content) != `"bye"` {
		t.Fatalf("%+v", env.Messages)
	}
}

// TestParseListRoom: a history's list is made once, with room for the
// turn's own messages, and a hostile document cannot make it large.
func TestParseListRoom(t *testing.T) {
	var msgs []string
	for i := range 1000 {
		msgs = append(msgs, fmt.Sprintf(`{"role":"user","content":"q %d"}`, i))
	}
	env, err := Parse([]byte(`{"version":1,"messages":[` + strings.Join(msgs, ",") + `]}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(env.Messages) != 1000 || cap(env.Messages) != 1000+SpareMessages {
		t.Fatalf("%d messages in a list of %d", len(env.Messages), cap(env.Messages))
	}
	// "role" many times over, in one message: the list stays small.
	many := []byte(`{"version":1,"messages":[{"role":"user","content":[` + strings.Repeat(`"role",`, 5000) + `"role"]}]}`)
	var e Envelope
	if !scanEnvelope(many, &e) || len(e.Messages) != 1 {
		t.Fatalf("%+v", e)
	}
	if c := cap(e.Messages); c > MaxMessages+1+SpareMessages || c > len(many)/12+1+SpareMessages {
		t.Fatalf("a list of %d for %d bytes", c, len(many))
	}
	tiny := []byte(`{"version":1,"messages":[{"role":"user","content":"\"role\"role\""}]}`)
	if !scanEnvelope(tiny, &e) || cap(e.Messages) > len(tiny)/12+1+SpareMessages {
		t.Fatalf("a list of %d for %d bytes", cap(e.Messages), len(tiny))
	}
}
