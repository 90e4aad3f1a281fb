package a2acompat

import "testing"

// TestAdversarialSkipStringExhaustive: skipString against the pair-by-pair
// reading on every input up to 11 bytes of quotes, backslashes and a
// plain byte, from every start (backslash runs of every parity before
// every quote, at every offset).
func TestAdversarialSkipStringExhaustive(t *testing.T) {
	alpha := []byte(`"\a`)
	buf := make([]byte, 0, 11)
	var rec func(n int)
	rec = func(n int) {
		for i := range buf {
			if got, want := skipString(buf, i), skipStringBytewise(buf, i); got != want {
				t.Fatalf("skipString(%q, %d) = %d, pair by pair %d", buf, i, got, want)
			}
		}
		if n == 0 {
			return
		}
		for _, c := range alpha {
			buf = append(buf, c)
			rec(n - 1)
			buf = buf[:len(buf)-1]
		}
	}
	rec(11)
}
