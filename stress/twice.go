package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/astraldeep/astralvessel-go/stress/internal/load"
	"github.com/astraldeep/astralvessel-go/stress/internal/stack"
)

// RunTwice runs the load of o on two stacks at once on this host, each of
// a project of its own (so its own call uid range, reservation and
// cgroups): both stacks come up first, then both loads start together
// (issue 31: two deployments on one host). The runs write to o.Out/a and
// o.Out/b. A DNS trap, when asked for, is shared: both stacks live in the
// same network namespace. The reports come back even when one run failed.
func RunTwice(ctx context.Context, o Options) ([2]*load.Report, error) {
	var reps [2]*load.Report
	if o.Log == nil {
		o.Log = io.Discard
	}
	// Each run's calls pass through this folder to their run's agent
	// package and scratch, as unprivileged uids (run does the same for its
	// own folder).
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return reps, fmt.Errorf("stress: %w", err)
	}
	if err := os.Chmod(o.Out, 0o755); err != nil {
		return reps, fmt.Errorf("stress: %w", err)
	}
	var trap *dnsTrap
	if o.DNSTrap != "" {
		var err error
		if trap, err = startDNSTrap(o.DNSTrap); err != nil {
			return reps, fmt.Errorf("stress: %w", err)
		}
		defer trap.Close()
	}
	g := newGate(len(reps))
	errs := make([]error, len(reps))
	var wg sync.WaitGroup
	for i, name := range []string{"a", "b"} {
		ro := o
		ro.DNSTrap = "" // the shared one above
		ro.Out = filepath.Join(o.Out, name)
		ro.Project = stack.RunProject()
		if o.Project != "" {
			ro.Project = o.Project + "-" + name
		}
		ro.Command = o.Command + " (run " + name + ")"
		ro.Log = prefixed{w: o.Log, prefix: "[" + name + "] "}
		before := o.BeforeLoad
		ro.BeforeLoad = func(ctx context.Context) error {
			if before != nil {
				if err := before(ctx); err != nil {
					return err
				}
			}
			return g.arrive(ctx)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			reps[i], errs[i] = run(ctx, ro)
			if errs[i] != nil {
				errs[i] = fmt.Errorf("run %s: %w", name, errs[i])
				g.fail() // the other run stops waiting for this one
			}
		}()
	}
	wg.Wait()
	err := errors.Join(errs...)
	if reps[0] != nil && reps[1] != nil && reps[0].Project == reps[1].Project {
		err = errors.Join(err, fmt.Errorf("stress: both runs used project %q", reps[0].Project))
	}
	if trap != nil {
		err = errors.Join(err, trap.Err())
	}
	return reps, err
}

// problems lists what makes a finished run fail: failed turns, scratch
// left behind, shell commands ended by a signal their turn did not ask for
// (a kill from outside the turn: another deployment's sweep).
func problems(rep *load.Report) []string {
	var p []string
	if rep.TurnsFailed > 0 {
		p = append(p, fmt.Sprintf("%d failed turns", rep.TurnsFailed))
	}
	if rep.ScratchEntries > 0 {
		p = append(p, fmt.Sprintf("%d entries left in the sandbox scratch", rep.ScratchEntries))
	}
	if rep.ToolKills > 0 {
		p = append(p, fmt.Sprintf("%d shell commands ended by a signal their turn did not ask for", rep.ToolKills))
	}
	return p
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

// prefixed writes each line with a prefix naming its run.
type prefixed struct {
	w      io.Writer
	prefix string
}

func (p prefixed) Write(b []byte) (int, error) {
	lines := strings.SplitAfter(string(b), "\n")
	var sb strings.Builder
	for _, l := range lines {
		if l != "" {
			sb.WriteString(p.prefix + l)
		}
	}
	if _, err := p.w.Write([]byte(sb.String())); err != nil {
		return 0, err
	}
	return len(b), nil
}
