package a2aserver_test

import (
	"os"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// TestBenchBindings measures one non-streaming turn (the scripted echo,
// no tool) through a2a-go's client over each binding, interleaved in
// rounds, for docs/performance.md. VESSEL_BENCH_BINDINGS=1 runs it.
func TestBenchBindings(t *testing.T) {
	if os.Getenv("VESSEL_BENCH_BINDINGS") == "" {
		t.Skip("set VESSEL_BENCH_BINDINGS=1")
	}
	h := newHarnessConfig(t, selfCards)
	alice := as(h.keyApp1, "alice")
	const rounds, n = 5, 100
	per := map[a2a.TransportProtocol][]time.Duration{}
	for range rounds {
		for _, b := range bindings {
			cl := h.cardClient("field-guide", b)
			if _, err := cl.SendMessage(alice, &a2a.SendMessageRequest{Message: textMsg("warm")}); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			for range n {
				if _, err := cl.SendMessage(alice, &a2a.SendMessageRequest{Message: textMsg("hello")}); err != nil {
					t.Fatal(err)
				}
			}
			per[b] = append(per[b], time.Since(start)/n)
		}
	}
	for _, b := range bindings {
		d := per[b]
		for i := range d {
			for j := i + 1; j < len(d); j++ {
				if d[j] < d[i] {
					d[i], d[j] = d[j], d[i]
				}
			}
		}
		t.Logf("%-9s median %v per SendMessage (rounds %v)", b, d[len(d)/2], d)
	}
}
