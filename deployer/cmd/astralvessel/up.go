package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/astraldeep/astralvessel-go/deployer/localstack"
)

func init() {
	register(&command{
		name:    "up",
		usage:   "up [FILE] [--listen ADDR] [--state DIR] [--bin DIR] [--no-build] [--script FILE] [--scripted] [--env-file F] [--timeout D]",
		help:    "FILE is the deployment (default " + defaultDeployment + ", from the current folder or the source tree).",
		summary: "run the local stack (vessel, sandboxes, egress, scripted model) until Ctrl-C",
		run:     runUp,
	})
}

// defaultDeployment is the example deployment, relative to the source tree.
const defaultDeployment = "deploy/deployment.toml"

func runUp(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("up", stderr)
	listen := fs.String("listen", "127.0.0.1:8700", "the vessel's address")
	grpcListen := fs.String("grpc-listen", "", "the vessel's gRPC binding address (default --listen's host, its port + 1)")
	state := fs.String("state", localstack.DefaultStateDir(), "state folder: keys, logs, task store, stack.json")
	bin := fs.String("bin", os.Getenv("VESSEL_BIN_DIR"), "folder with prebuilt vessel, sandboxd, egress, scripted-model (default $VESSEL_BIN_DIR, else build them from the source tree)")
	noBuild := fs.Bool("no-build", false, "use the binaries already in the source tree's .cache/bin (or PATH)")
	script := fs.String("script", "", "script file for the scripted model")
	scripted := fs.Bool("scripted", false, "use the scripted model even when VESSEL_UPSTREAM_MODEL_URL and VESSEL_MODEL_KEY are set")
	envFile := fs.String("env-file", "", "read env: references from this file too (default: .env beside FILE, if present)")
	timeout := fs.Duration("timeout", 90*time.Second, "how long to wait for every service to be ready")
	pos, code, ok := parseFlags(fs, args, stdout, stderr)
	if !ok {
		return code
	}
	if len(pos) > 1 {
		usageError("up", stderr)
		return 2
	}

	// A busy address is said at once, before building or starting anything.
	if err := checkListen(*listen); err != nil {
		fmt.Fprintf(stderr, "astralvessel up: %v\n", err)
		return 1
	}
	if _, port, _ := net.SplitHostPort(*listen); *grpcListen == "" && port != "0" {
		g, err := localstack.DefaultGRPCListen(*listen)
		if err != nil {
			fmt.Fprintf(stderr, "astralvessel up: %v\n", err)
			return 2
		}
		*grpcListen = g
	}
	if *grpcListen != "" {
		if err := checkListen(*grpcListen); err != nil {
			fmt.Fprintf(stderr, "astralvessel up: --grpc-listen: %v\n", err)
			return 1
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	cwd, _ := os.Getwd()
	root := localstack.FindRepoRoot(cwd)
	file := defaultDeployment
	if len(pos) == 1 {
		file = pos[0]
	} else if _, err := os.Stat(file); err != nil && root != "" {
		file = filepath.Join(root, defaultDeployment)
	}
	if root == "" {
		root = localstack.FindRepoRoot(filepath.Dir(file))
	}
	env, _, err := operatorEnv(file, *envFile)
	if err != nil {
		fmt.Fprintf(stderr, "astralvessel up: %v\n", err)
		return 1
	}

	names := []string{"vessel", "sandboxd", "egress", "scripted-model"}
	binDir := *bin
	if binDir == "" && root != "" {
		binDir = filepath.Join(root, ".cache", "bin")
		if !*noBuild {
			fmt.Fprintf(stderr, "building %s into %s (go build: a few minutes the first time, quick after)\n", strings.Join(names, ", "), binDir)
			if err := localstack.Build(ctx, root, binDir, names, stderr); err != nil {
				fmt.Fprintf(stderr, "astralvessel up: %v\n", err)
				return 1
			}
		}
	}
	bins, err := localstack.Locate(binDir, names)
	if err != nil {
		fmt.Fprintf(stderr, "astralvessel up: %v\n", err)
		return 1
	}

	cfg := localstack.Config{
		DeploymentFile: file,
		Env:            env,
		Bins:           bins,
		StateDir:       *state,
		Listen:         *listen,
		GRPCListen:     *grpcListen,
		Script:         *script,
		ReadyTimeout:   *timeout,
		Log:            stderr,
	}
	if !*scripted {
		cfg.UpstreamURL = os.Getenv("VESSEL_UPSTREAM_MODEL_URL")
		cfg.UpstreamKey = os.Getenv("VESSEL_MODEL_KEY")
	}
	began := time.Now()
	st, err := localstack.Start(ctx, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "astralvessel up: %v\n", err)
		return 1
	}
	defer st.Stop()
	key, _ := st.AppKey()
	fmt.Fprintf(stdout, "AstralVessel is up at %s (ready in %d ms)\n", st.URL, time.Since(began).Milliseconds())
	fmt.Fprintf(stdout, "  gRPC:    %s (the request's tenant names the agent)\n", st.Info.GRPCAddress)
	fmt.Fprintf(stdout, "  agents:  %s\n", strings.Join(st.Agents, ", "))
	fmt.Fprintf(stdout, "  model:   %s\n", st.Model)
	fmt.Fprintf(stdout, "  app key: %s (app %s, in %s); send X-Vessel-User: %s\n", key, st.AppID, st.AppKeyFile, st.User)
	fmt.Fprintf(stdout, "  logs:    %s\n", st.Logs)
	fmt.Fprintf(stdout, "  turns:   %s turns (the operator API at %s, token in %s)\n", shellQuote(selfCommand()), st.Info.OperatorURL, st.Info.OperatorTokenFile)
	fmt.Fprintf(stdout, "  try:     %s\n", askHint(selfCommand(), *state, localstack.DefaultStateDir()))
	fmt.Fprintln(stdout, "Ctrl-C stops everything.")

	if err := st.Wait(ctx); err != nil {
		fmt.Fprintf(stderr, "astralvessel up: %v\n", err)
		return 1
	}
	fmt.Fprintln(stderr, "stopping")
	return 0
}

// checkListen makes sure the vessel's address is free now.
func checkListen(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("%s is already in use (another process listens there, maybe another local stack): stop it or pass --listen with another address", addr)
	}
	if err != nil {
		return fmt.Errorf("--listen %s: %w", addr, err)
	}
	return ln.Close()
}

// selfCommand is how to run this program again from a shell: "astralvessel"
// when that name in PATH is this very binary, else its absolute path.
func selfCommand() string {
	exe, err := os.Executable()
	if err != nil {
		return "astralvessel"
	}
	if p, err := exec.LookPath("astralvessel"); err == nil {
		if sameFile(p, exe) {
			return "astralvessel"
		}
	}
	return exe
}

// sameFile reports whether both paths exist and name the same file.
func sameFile(a, b string) bool {
	sa, err := os.Stat(a)
	if err != nil {
		return false
	}
	sb, err := os.Stat(b)
	return err == nil && os.SameFile(sa, sb)
}

// askHint is an ask command line that works as printed: the program as the
// shell finds it, and --state unless the stack uses the default one.
func askHint(self, state, defaultState string) string {
	hint := shellQuote(self) + " ask"
	if state != defaultState {
		hint += " --state " + shellQuote(state)
	}
	return hint + " " + shellQuote("Which birds in the guide hunt fish?")
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+=:,@", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
