package transcript

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// FuzzScanEnvelope checks the envelope scanner against json.Decoder
// whenever it accepts a document.
func FuzzScanEnvelope(f *testing.F) {
	for _, s := range []string{
		`{"version":1,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"bash","arguments":"{\"c\":1}"}}]},{"role":"tool","tool_call_id":"a","content":[{"type":"text","text":"x"}],"name":"n"}]}`,
		` {"messages":[],"version":1,"extra":{"a":[1,2]}} `,
		`{"version":1,"messages":[{"Role":"user","content":"x"}]}`,
		`{"version":1,"messages":[{"role":"user","role":"tool"}]}`,
		`{"version":1,"messages":null}`,
		`{"version":1.0}`,
		`{"version":1,"messages":[{"role":"user","tool_calls":null,"content":"\u00e9"}]}`,
		`{"version":1}}`,
		`{"version":1,"messages":[{"role":"assistant","tool_calls":[{"id":"a","id":"b","function":{"name":"x","name":"y"}}]}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var got Envelope
		n, ok := scanEnvelope(b, &got)
		if !ok {
			return
		}
		var want Envelope
		dec := json.NewDecoder(bytes.NewReader(b))
		if err := dec.Decode(&want); err != nil || dec.More() {
			t.Fatalf("scanner accepted what the decoder refuses (%v): %q", err, b)
		}
		if n != len(want.Messages) {
			t.Fatalf("%q: counted %d messages, decoded %d", b, n, len(want.Messages))
		}
		if n > MaxMessages+1 { // the scanner keeps only the first of a list over the cap
			want.Messages = want.Messages[:MaxMessages+1]
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q:\n got %+v\nwant %+v", b, got, want)
		}
	})
}

// BenchmarkParseOversize: a 10,000-message history, refused by its count
// (its first 2,001 messages read).
func BenchmarkParseOversize(b *testing.B) {
	one := `{"role":"user","content":"Which birds hunt fish?"},{"role":"assistant","content":"Ospreys, kingfishers and herons."},`
	body := []byte(`{"version":1,"messages":[` + strings.TrimSuffix(strings.Repeat(one, 5000), ",") + `]}`)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(body); err == nil || err != ErrOverCap {
			b.Fatal(err)
		}
	}
}

func BenchmarkParse(b *testing.B) {
	var msgs []string
	for i := range 500 {
		msgs = append(msgs, fmt.Sprintf(`{"role":"user","content":"question %d, with some words in it"}`, i),
			fmt.Sprintf(`{"role":"assistant","content":"answer %d, with some more words in it to look real"}`, i))
	}
	body := []byte(`{"version":1,"messages":[` + strings.Join(msgs, ",") + `]}`)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(body); err != nil {
			b.Fatal(err)
		}
	}
}
