package main

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/astraldeep/astralvessel-go/stress/internal/load"
)

// TestLocalStackShortLoadTwoAtOnce runs two short loads on one host at once, each
// with a stack of its own project (issue 31: two deployments on one host):
// both stacks come up first, then both loads start together, every shell
// command held a second so calls of the two overlap. Each run must end with
// 0 failed turns and 0 cross-kills (a shell command ended by a signal its
// turn did not ask for: another sandbox's sweep reaching a uid not its
// own). Needs the local stack (VESSEL_E2E_LOCAL=1) and root, as sandboxd does.
func TestLocalStackShortLoadTwoAtOnce(t *testing.T) {
	if os.Getenv("VESSEL_E2E_LOCAL") != "1" {
		t.Skip("set VESSEL_E2E_LOCAL=1 to run the load test against the local stack")
	}
	bin := testBin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	const runs = 2
	gate := newGate(runs)
	reps := make([]*load.Report, runs)
	errs := make([]error, runs)
	var wg sync.WaitGroup
	for i := range runs {
		out, err := os.MkdirTemp("", "stress-two-") // not t.TempDir(): 0700
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.RemoveAll(out) })
		wg.Add(1)
		go func() {
			defer wg.Done()
			reps[i], errs[i] = Run(ctx, Options{
				Users: 3, Turns: 2, History: 100, Pieces: 50, Cancels: 1, Replicas: 1,
				Out: out, BinDir: bin, TurnTimeout: 2 * time.Minute, ToolHold: time.Second,
				Command: "go test -run " + t.Name(), Log: testLog{t}, BeforeLoad: gate.arrive,
			})
			if errs[i] != nil {
				gate.fail() // the other run stops waiting for this one
			}
		}()
	}
	wg.Wait()
	if reps[0] != nil && reps[1] != nil && reps[0].Project == reps[1].Project {
		t.Errorf("both runs used project %q", reps[0].Project)
	}
	for i, rep := range reps {
		if rep != nil {
			t.Logf("run %d (project %s):\n%s", i, rep.Project, rep.Markdown())
		}
		if errs[i] != nil {
			t.Errorf("run %d: %v", i, errs[i])
			continue
		}
		if rep.ToolKills > 0 {
			t.Errorf("run %d: %d shell commands were killed by a signal their turn did not ask for", i, rep.ToolKills)
		}
		if rep.TurnsFailed > 0 || rep.TurnsOK != 6 || rep.CancelledOK != 1 {
			t.Errorf("run %d: turns ok %d (cancelled %d), failed %d; want 6 (1), 0", i, rep.TurnsOK, rep.CancelledOK, rep.TurnsFailed)
		}
		if rep.ScratchEntries > 0 {
			t.Errorf("run %d: %d entries left in the sandbox scratch", i, rep.ScratchEntries)
		}
	}
}

// gate lets n runs start their loads together once every stack is up.
type gate struct {
	mu      sync.Mutex
	left    int
	open    chan struct{}
	failed  chan struct{}
	failOne sync.Once
}

func newGate(n int) *gate {
	return &gate{left: n, open: make(chan struct{}), failed: make(chan struct{})}
}

func (g *gate) arrive(ctx context.Context) error {
	g.mu.Lock()
	if g.left--; g.left == 0 {
		close(g.open)
	}
	g.mu.Unlock()
	select {
	case <-g.open:
		return nil
	case <-g.failed:
		return errors.New("another run failed before its load")
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g *gate) fail() { g.failOne.Do(func() { close(g.failed) }) }
