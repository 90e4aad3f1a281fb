package transcript

import (
	"strings"
	"testing"
)

// FuzzCountMessages: a count over the cap on any prefix of a document is
// the count on the whole document, and Parse refuses it for its length;
// a final count on a prefix is the whole document's.
func FuzzCountMessages(f *testing.F) {
	over := `{"version":1,"messages":[` + strings.Repeat(`{},`, MaxMessages) + `{}]}`
	for _, s := range []string{over, strings.Replace(over, `{},`, `{"role":"user","content":"{"},`, 5),
		`{"messages":[{},1]}`, `{"messages":[]}`, `{"version":1}`, `[]`} {
		f.Add([]byte(s), uint16(len(s)/2))
	}
	f.Fuzz(func(t *testing.T, b []byte, cut uint16) {
		prefix := b[:min(int(cut), len(b))]
		pn, pfinal := CountMessages(prefix)
		n, final := CountMessages(b)
		if pn > MaxMessages && n <= MaxMessages {
			t.Fatalf("prefix counts %d, the whole %d", pn, n)
		}
		if pfinal && n != pn {
			t.Fatalf("prefix final at %d, the whole %d (final %v)", pn, n, final)
		}
		if n > MaxMessages {
			if _, err := Parse(b); err != ErrOverCap {
				t.Fatalf("counted %d, Parse: %v", n, err)
			}
		}
	})
}
