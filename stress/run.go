package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/astraldeep/astralvessel-go/runtime/benchenv"
	"github.com/astraldeep/astralvessel-go/stress/internal/load"
	"github.com/astraldeep/astralvessel-go/stress/internal/stack"
)

// Options are the load tool's settings (the command-line flags).
type Options struct {
	Users, Turns, History, Cancels, Pieces, Replicas int

	Out      string // report.json, report.md and the run's files go here
	Repo     string // repository root, to build binaries
	BinDir   string // prebuilt vessel, sandboxd, scripted-model
	Postgres string // task store DSN for replicas
	// Scratch is "tmpfs" (a tmpfs on the sandbox scratch, as deployed;
	// needs root), "dir" (a plain folder under Out) or "auto" (tmpfs when
	// it can be mounted, else dir).
	Scratch string

	ServerCPUs string // taskset list for vessels and sandboxd
	ClientCPUs string // taskset list for this process and the model

	TurnTimeout time.Duration
	// Project is the stack's vessel.project, which picks its call uid
	// block: two runs on one host at once need different ones (empty: a
	// name of this run's own, stack.RunProject).
	Project string
	// ToolHold keeps each turn's shell command alive this long (a sleep
	// first), so runs beside each other overlap their calls.
	ToolHold time.Duration
	// BeforeLoad, when set, runs once the stack is up, before the first
	// turn; an error ends the run (a test lines up runs beside each other).
	BeforeLoad func(context.Context) error
	// Profile, when set, fetches CPU profiles of this length from vessel-0
	// and sandboxd a second into the run (binaries need a pprof listener on
	// VESSEL_PPROF_ADDR).
	Profile time.Duration
	// Settle bounds the wait for the scratch to drain after the last turn:
	// a turn's workspace is ended just after its final event, so the last
	// ones may still be going when the client has seen every turn finish.
	Settle  time.Duration
	Command string // as typed, for the report
	Log     io.Writer
	// DNSTrap, when set (a loopback address, e.g. 127.0.0.1:53), runs a
	// DNS server there that answers nothing and fails the run if anything
	// asked it a name: make load points the resolver at it in a network
	// namespace with only loopback (dnstrap.go).
	DNSTrap string
}

// Run starts the stack, drives the load, measures and writes the report.
func Run(ctx context.Context, o Options) (*load.Report, error) {
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.DNSTrap != "" {
		trap, err := startDNSTrap(o.DNSTrap)
		if err != nil {
			return nil, fmt.Errorf("stress: %w", err)
		}
		defer trap.Close()
		rep, err := run(ctx, o)
		if err == nil {
			err = trap.Err()
		}
		return rep, err
	}
	return run(ctx, o)
}

func run(ctx context.Context, o Options) (*load.Report, error) {
	switch o.Scratch {
	case "":
		o.Scratch = "dir"
	case "tmpfs", "dir", "auto":
	default:
		return nil, fmt.Errorf("stress: --scratch %q: want tmpfs, dir or auto", o.Scratch)
	}
	if o.Replicas < 1 {
		o.Replicas = 1
	}
	if o.Replicas > 1 && o.Postgres == "" {
		o.Postgres = os.Getenv("VESSEL_TEST_POSTGRES")
	}
	if o.Project == "" {
		o.Project = stack.RunProject()
	}
	if o.Settle <= 0 {
		o.Settle = 30 * time.Second
	}
	out, err := filepath.Abs(o.Out)
	if err != nil {
		return nil, fmt.Errorf("stress: %w", err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, fmt.Errorf("stress: %w", err)
	}
	// sandboxd runs tool calls as an unprivileged user, who must be able to
	// pass through this folder to the agent package and scratch below it.
	if err := os.Chmod(out, 0o755); err != nil {
		return nil, fmt.Errorf("stress: %w", err)
	}
	if o.ClientCPUs != "" {
		if msg, err := exec.Command("taskset", "-a", "-p", "-c", o.ClientCPUs, strconv.Itoa(os.Getpid())).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("stress: pin the load tool to %s: %w: %s", o.ClientCPUs, err, msg)
		}
	}

	startCtx, cancelStart := context.WithTimeout(ctx, 10*time.Minute) // includes building
	st, err := stack.Start(startCtx, stack.Config{
		Dir:             filepath.Join(out, "run"),
		Repo:            o.Repo,
		BinDir:          o.BinDir,
		Replicas:        o.Replicas,
		Postgres:        o.Postgres,
		Script:          load.ScriptHold(o.Pieces, o.ToolHold),
		Project:         o.Project,
		ServerCPUs:      o.ServerCPUs,
		ModelCPUs:       o.ClientCPUs,
		Pprof:           o.Profile > 0,
		ScratchTmpfs:    o.Scratch != "dir",
		ScratchFallback: o.Scratch == "auto",
		Log:             o.Log,
		Users:           o.Users,
	})
	cancelStart()
	if err != nil {
		return nil, err
	}
	defer st.Stop()

	if o.BeforeLoad != nil {
		if err := o.BeforeLoad(ctx); err != nil {
			return nil, fmt.Errorf("stress: before the load: %w", err)
		}
	}
	rep := &load.Report{
		Command: o.Command, Machine: load.ThisMachine(), Started: time.Now().UTC().Format(time.RFC3339),
		Users: o.Users, Turns: o.Turns, History: o.History, Pieces: o.Pieces, Cancels: o.Cancels,
		Replicas: o.Replicas, Store: "sqlite", ServerCPUs: o.ServerCPUs, ClientCPUs: o.ClientCPUs,
		Scratch: st.ScratchKind(), Project: o.Project,
	}
	if o.Postgres != "" {
		rep.Store = "postgres"
	}

	fmt.Fprintf(o.Log, "stress: %d users × %d turns, history %d, pieces %d, cancels %d, replicas %d\n",
		o.Users, o.Turns, o.History, o.Pieces, o.Cancels, o.Replicas)
	rep.LoadAvg[0] = benchenv.Load1()
	cpu0 := cpuSnapshot(st)
	began := time.Now()
	profiles := make(chan struct{})
	if o.Profile > 0 {
		go func() {
			defer close(profiles)
			profile(ctx, o, out, st.Vessels[0], st.Sandbox)
		}()
	} else {
		close(profiles)
	}
	turns, runErr := load.Run(ctx, load.Config{
		Users: o.Users, Turns: o.Turns, History: o.History, Cancels: o.Cancels, Pieces: o.Pieces,
		Endpoints: st.Endpoint, Agent: stack.AgentID, AppKey: st.AppKey,
		TurnTimeout: o.TurnTimeout, Log: o.Log,
	})
	rep.Summarize(turns, time.Since(began))
	cpu1 := cpuSnapshot(st)
	rep.LoadAvg[1] = benchenv.Load1()
	for i := range st.Vessels {
		rep.VesselCPUSeconds = append(rep.VesselCPUSeconds, cpu1.vessels[i]-cpu0.vessels[i])
	}
	rep.SandboxCPUSeconds = cpu1.sandbox - cpu0.sandbox
	rep.ModelCPUSeconds = cpu1.model - cpu0.model
	rep.ClientCPUSeconds = cpu1.self - cpu0.self
	<-profiles
	if err := writeJSON(filepath.Join(out, "turns.json"), turns); err != nil {
		return nil, err
	}

	// Workspaces are deleted as turns end; wait (up to Settle) for the last.
	drainStart := time.Now()
	for {
		if rep.ScratchEntries, rep.ScratchBytes, err = st.ScratchLeft(); err != nil {
			return nil, err
		}
		if rep.ScratchEntries == 0 || time.Since(drainStart) >= o.Settle || ctx.Err() != nil {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	rep.ScratchDrainSeconds = time.Since(drainStart).Seconds()
	for _, v := range st.Vessels {
		rep.VesselPeakRSSMB = append(rep.VesselPeakRSSMB, mb(v.PeakRSS()))
		if exited, werr := v.Exited(); exited {
			rep.Failures = append(rep.Failures, fmt.Sprintf("%s exited during the run: %v\n%s", v.Name, werr, st.LogTail(v, 20)))
		}
	}
	rep.SandboxPeakRSSMB = mb(st.Sandbox.PeakRSS())
	rep.ModelPeakRSSMB = mb(st.Model.PeakRSS())

	if err := writeReport(out, rep); err != nil {
		return rep, err
	}
	if runErr != nil {
		return rep, fmt.Errorf("stress: run interrupted: %w", runErr)
	}
	return rep, nil
}

// profile saves CPU profiles of the given processes, taken together.
func profile(ctx context.Context, o Options, out string, procs ...*stack.Proc) {
	select {
	case <-ctx.Done():
		return
	case <-time.After(time.Second):
	}
	done := make(chan struct{}, len(procs))
	for _, p := range procs {
		go func() {
			defer func() { done <- struct{}{} }()
			if p.PprofAddr == "" {
				return
			}
			u := fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", p.PprofAddr, int(o.Profile.Seconds()))
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
			if err != nil {
				return
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				fmt.Fprintf(o.Log, "stress: no profile from %s (built without pprof?): %v\n", p.Name, err)
				return
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			if err != nil || resp.StatusCode != http.StatusOK {
				fmt.Fprintf(o.Log, "stress: no profile from %s: %v %s\n", p.Name, err, resp.Status)
				return
			}
			path := filepath.Join(out, p.Name+".cpu.pprof")
			if err := os.WriteFile(path, b, 0o644); err == nil {
				fmt.Fprintf(o.Log, "stress: wrote %s\n", path)
			}
		}()
	}
	for range procs {
		<-done
	}
}

type cpuTimes struct {
	vessels              []float64
	sandbox, model, self float64
}

func cpuSnapshot(st *stack.Stack) cpuTimes {
	var c cpuTimes
	for _, v := range st.Vessels {
		c.vessels = append(c.vessels, v.CPUSeconds())
	}
	c.sandbox = st.Sandbox.CPUSeconds()
	c.model = st.Model.CPUSeconds()
	c.self = benchenv.CPUTime().Seconds()
	return c
}

func mb(b int64) float64 { return float64(b) / (1 << 20) }

func writeJSON(path string, v any) error {
	js, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("stress: encode %s: %w", filepath.Base(path), err)
	}
	if err := os.WriteFile(path, append(js, '\n'), 0o644); err != nil {
		return fmt.Errorf("stress: write %s: %w", filepath.Base(path), err)
	}
	return nil
}

func writeReport(dir string, rep *load.Report) error {
	if err := writeJSON(filepath.Join(dir, "report.json"), rep); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "report.md"), []byte(rep.Markdown()), 0o644); err != nil {
		return fmt.Errorf("stress: write report: %w", err)
	}
	return nil
}

// userinfo matches the password part of a URL, kept out of reports.
var userinfo = regexp.MustCompile(`(://[^:/@\s]*):[^@/\s]*@`)

// commandLine quotes the arguments for the report, without URL passwords.
func commandLine(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		a = userinfo.ReplaceAllString(a, "$1:***@")
		if strings.ContainsAny(a, " \t\"'$") {
			a = strconv.Quote(a)
		}
		q[i] = a
	}
	return strings.Join(q, " ")
}
