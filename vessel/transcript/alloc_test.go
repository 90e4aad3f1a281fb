package transcript

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
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
	if _, ok := scanEnvelope(many, &e); !ok || len(e.Messages) != 1 {
		t.Fatalf("%+v", e)
	}
	if c := cap(e.Messages); c > MaxMessages+1+SpareMessages || c > len(many)/12+1+SpareMessages {
		t.Fatalf("a list of %d for %d bytes", c, len(many))
	}
	tiny := []byte(`{"version":1,"messages":[{"role":"user","content":"\"role\"role\""}]}`)
	if _, ok := scanEnvelope(tiny, &e); !ok || cap(e.Messages) > len(tiny)/12+1+SpareMessages {
		t.Fatalf("a list of %d for %d bytes", cap(e.Messages), len(tiny))
	}
}

// TestOversizeRefusedWithoutTheList: a history over the cap is refused
// for its length before anything else is checked (its version, what
// follows its 2,001st message), on the scanner's path and on
// encoding/json's, and the scanner's path never holds more than
// MaxMessages+1 messages.
func TestOversizeRefusedWithoutTheList(t *testing.T) {
	one := `{"role":"user","content":"Which birds hunt fish?"},{"role":"assistant","content":"Ospreys."},`
	list := strings.TrimSuffix(strings.Repeat(one, 5000), ",")
	over := ErrOverCap.Error()
	for doc, want := range map[string]string{
		`{"version":1,"messages":[` + list + `]}`:                                               over,
		`{"messages":[` + list + `],"version":1}`:                                               over,
		`{"Messages":[` + list + `],"version":1}`:                                               over, // encoding/json's path
		`{"version":2,"messages":[` + list + `]}`:                                               over,
		`{"version":1,"messages":[` + list + `,{"role":7}]}`:                                    over,
		`{"version":1,"messages":[` + list + `,{"role":`:                                        over, // not read past the 2,001st
		`{"version":1,"messages":[` + list + `],"messages":[]}`:                                 over, // the first list counts
		"{\"version\":1,\"messages\":[" + list + ",{\"content\":\"\xff\"}]}":                    over, // not read for UTF-8 either
		`{"version":1,"messages":[{"role":7},` + list + `]}`:                                    over, // an object counts, whatever it holds
		`{"version":1,"messages":[{"role":"user"` + strings.Repeat("[", 70) + `,` + list + `]}`: `the history is not a valid transcript envelope: malformed JSON at byte 40`,
		`{"version":1,"messages":[1,` + list + `]}`:                                             `the history is not a valid transcript envelope: field "messages" has the wrong type`,
	} {
		_, err := Parse([]byte(doc))
		if err == nil || err.Error() != want {
			t.Errorf("%.40s…: %v, want %q", doc, err, want)
		}
	}
	var env Envelope
	n, ok := scanEnvelope([]byte(`{"version":1,"messages":[`+list+`]}`), &env)
	if !ok || n != 10000 || len(env.Messages) != MaxMessages+1 {
		t.Fatalf("read %d messages (ok %v), kept %d", n, ok, len(env.Messages))
	}
	// What refusing it allocates: about its first MaxMessages+1 messages'
	// list, not one for all 10,000.
	b := []byte(`{"version":1,"messages":[` + list + `]}`)
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	if _, err := Parse(b); err == nil {
		t.Fatal("accepted")
	}
	runtime.ReadMemStats(&m1)
	if got, most := m1.TotalAlloc-m0.TotalAlloc, uint64(unsafe.Sizeof(Message{}))*(MaxMessages+1+SpareMessages)+64<<10; got > most {
		t.Fatalf("refusing 10,000 messages allocated %d bytes, want at most %d", got, most)
	}
}
