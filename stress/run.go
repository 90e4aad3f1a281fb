package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

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

	ServerCPUs string // taskset list for vessels and sandboxd
	ClientCPUs string // taskset list for this process and the model

	TurnTimeout time.Duration
	// Settle is how long to wait after the last turn before counting scratch
	// (workspaces are removed as turns end).
	Settle  time.Duration
	Command string // as typed, for the report
	Log     io.Writer
}

// Run starts the stack, drives the load, measures and writes the report.
func Run(ctx context.Context, o Options) (*load.Report, error) {
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Replicas < 1 {
		o.Replicas = 1
	}
	if o.Replicas > 1 && o.Postgres == "" {
		o.Postgres = os.Getenv("VESSEL_TEST_POSTGRES")
	}
	if o.Settle <= 0 {
		o.Settle = 2 * time.Second
	}
	out, err := filepath.Abs(o.Out)
	if err != nil {
		return nil, fmt.Errorf("stress: %w", err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, fmt.Errorf("stress: %w", err)
	}
	if o.ClientCPUs != "" {
		if msg, err := exec.Command("taskset", "-a", "-p", "-c", o.ClientCPUs, strconv.Itoa(os.Getpid())).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("stress: pin the load tool to %s: %w: %s", o.ClientCPUs, err, msg)
		}
	}

	startCtx, cancelStart := context.WithTimeout(ctx, 10*time.Minute) // includes building
	st, err := stack.Start(startCtx, stack.Config{
		Dir:        filepath.Join(out, "run"),
		Repo:       o.Repo,
		BinDir:     o.BinDir,
		Replicas:   o.Replicas,
		Postgres:   o.Postgres,
		Script:     load.Script(o.Pieces),
		ServerCPUs: o.ServerCPUs,
		ModelCPUs:  o.ClientCPUs,
		Log:        o.Log,
	})
	cancelStart()
	if err != nil {
		return nil, err
	}
	defer st.Stop()

	rep := &load.Report{
		Command: o.Command, Machine: load.ThisMachine(), Started: time.Now().UTC().Format(time.RFC3339),
		Users: o.Users, Turns: o.Turns, History: o.History, Pieces: o.Pieces, Cancels: o.Cancels,
		Replicas: o.Replicas, Store: "sqlite", ServerCPUs: o.ServerCPUs, ClientCPUs: o.ClientCPUs,
	}
	if o.Postgres != "" {
		rep.Store = "postgres"
	}

	fmt.Fprintf(o.Log, "stress: %d users × %d turns, history %d, pieces %d, cancels %d, replicas %d\n",
		o.Users, o.Turns, o.History, o.Pieces, o.Cancels, o.Replicas)
	began := time.Now()
	turns, runErr := load.Run(ctx, load.Config{
		Users: o.Users, Turns: o.Turns, History: o.History, Cancels: o.Cancels, Pieces: o.Pieces,
		Endpoints: st.Endpoint, Agent: stack.AgentID, AppKey: st.AppKey,
		TurnTimeout: o.TurnTimeout, Log: o.Log,
	})
	rep.Summarize(turns, time.Since(began))

	// Workspaces are deleted when turns end; give the last ones a moment.
	select {
	case <-ctx.Done():
	case <-time.After(o.Settle):
	}
	if rep.ScratchEntries, rep.ScratchBytes, err = st.ScratchLeft(); err != nil {
		return nil, err
	}
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

func mb(b int64) float64 { return float64(b) / (1 << 20) }

func writeReport(dir string, rep *load.Report) error {
	js, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return fmt.Errorf("stress: encode report: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "report.json"), append(js, '\n'), 0o644); err != nil {
		return fmt.Errorf("stress: write report: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "report.md"), []byte(rep.Markdown()), 0o644); err != nil {
		return fmt.Errorf("stress: write report: %w", err)
	}
	return nil
}

// commandLine quotes the arguments for the report.
func commandLine(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if strings.ContainsAny(a, " \t\"'$") {
			a = strconv.Quote(a)
		}
		q[i] = a
	}
	return strings.Join(q, " ")
}
