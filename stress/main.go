// Command stress is AstralVessel's load tool. It starts the scripted model,
// one sandboxd and N vessel replicas as processes on loopback, drives them
// through the public client (vessel/client), and reports turns ok/failed,
// turn-time percentiles, time to first event, peak RSS of every server and
// the scratch left behind, as JSON and as a Markdown table.
//
//	go run . --users 50 --turns 3 --history 1000 --pieces 1000 --cancels 20 \
//	    --server-cpus 0 --client-cpus 1 --out /tmp/load
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

func main() {
	var o Options
	flag.IntVar(&o.Users, "users", 50, "concurrent users")
	flag.IntVar(&o.Turns, "turns", 3, "turns per user, one after another")
	flag.IntVar(&o.History, "history", 1000, "history messages sent with every turn")
	flag.IntVar(&o.Cancels, "cancels", 20, "turns cancelled mid-stream")
	flag.IntVar(&o.Pieces, "pieces", 1000, "text pieces streamed per turn")
	flag.IntVar(&o.Replicas, "replicas", 1, "vessel replicas (more than one uses PostgreSQL)")
	flag.StringVar(&o.Out, "out", "", "directory for report.json, report.md and the run's files (default: a new temporary directory)")
	flag.StringVar(&o.Repo, "repo", "", "repository root, to build the binaries (default: the folder holding go.work above the working directory)")
	flag.StringVar(&o.BinDir, "bin", "", "folder with prebuilt vessel, sandboxd and scripted-model (missing ones are built)")
	flag.StringVar(&o.Postgres, "postgres", "", "PostgreSQL DSN for the task store (default $VESSEL_TEST_POSTGRES when --replicas > 1)")
	flag.StringVar(&o.ServerCPUs, "server-cpus", "", "pin vessels and sandboxd to these CPUs (taskset list, e.g. 0)")
	flag.StringVar(&o.ClientCPUs, "client-cpus", "", "pin the load tool and scripted model to these CPUs (e.g. 1)")
	flag.StringVar(&o.Scratch, "scratch", "auto", "sandbox scratch: tmpfs (as in a deployment; needs root), dir (a folder under --out), or auto (tmpfs when it can be mounted)")
	flag.DurationVar(&o.Profile, "profile", 0, "fetch CPU profiles of this length from vessel-0 and sandboxd (needs binaries serving pprof on $VESSEL_PPROF_ADDR)")
	flag.DurationVar(&o.TurnTimeout, "turn-timeout", 5*time.Minute, "a turn taking longer fails")
	flag.StringVar(&o.Project, "project", "", "the stack's project name, which picks its call uid block (default astralvessel-load-<pid>-<random>: two runs on one host never share uids)")
	flag.DurationVar(&o.ToolHold, "tool-hold", 0, "keep each turn's shell command alive this long first (overlaps calls of runs beside each other)")
	flag.StringVar(&o.DNSTrap, "dns-trap", "", "run a DNS server on this loopback address that fails the run if the stack looks up any name (make load points resolv.conf at it inside a loopback-only network namespace)")
	twice := flag.Bool("twice", false, "run the load on two stacks at once, each of a project of its own (two deployments on one host); reports go to --out/a and --out/b, and any failed turn, leftover scratch or shell command killed from outside its turn in either run fails")
	flag.Parse()
	o.Command = commandLine(append([]string{"stress"}, os.Args[1:]...))
	o.Log = os.Stderr
	if o.Out == "" {
		dir, err := os.MkdirTemp("", "stress-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "stress:", err)
			os.Exit(1)
		}
		o.Out = dir
	}
	fmt.Fprintln(os.Stderr, "stress: writing to", o.Out)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *twice {
		os.Exit(runTwice(ctx, o))
	}
	rep, err := Run(ctx, o)
	if rep != nil {
		fmt.Print(rep.Markdown())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "stress:", err)
		os.Exit(1)
	}
	if p := problems(rep); len(p) > 0 {
		fmt.Fprintln(os.Stderr, "stress:", strings.Join(p, "; "))
		os.Exit(2)
	}
}

// runTwice runs RunTwice, prints both summaries and returns the exit code:
// 1 when a run could not finish, 2 when either run has a problem.
func runTwice(ctx context.Context, o Options) int {
	reps, err := RunTwice(ctx, o)
	code := 0
	for i, rep := range reps {
		name := string(rune('a' + i))
		if rep == nil {
			fmt.Printf("## Run %s: no report\n\n", name)
			continue
		}
		fmt.Printf("## Run %s (project %s)\n\n%s\n", name, rep.Project, rep.Markdown())
		if p := problems(rep); len(p) > 0 {
			fmt.Fprintf(os.Stderr, "stress: run %s: %s\n", name, strings.Join(p, "; "))
			code = 2
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "stress:", err)
		return 1
	}
	return code
}
