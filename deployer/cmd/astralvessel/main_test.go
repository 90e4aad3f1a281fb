package main

import (
	"bytes"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/astraldeep/astralvessel-go/deployer/spec"
)

const exampleDeployment = "../../../deploy/deployment.toml"

func setExampleEnv(t *testing.T) {
	t.Setenv("VESSEL_UPSTREAM_MODEL_URL", "https://models.example.org/v1")
	t.Setenv("VESSEL_APP_KEY_SHA256", "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08")
}

func run(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := dispatch(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestValidateExample(t *testing.T) {
	setExampleEnv(t)
	code, out, errOut := run("validate", exampleDeployment)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, "field-guide  sha256:") || !strings.Contains(out, "field-guide-reader  sha256:") || strings.Contains(out, "warning") {
		t.Errorf("output: %s", out)
	}
}

func TestValidateBroken(t *testing.T) {
	setExampleEnv(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "deployment.toml")
	src := "[egress]\nupstream_url = \"env:VESSEL_UPSTREAM_MODEL_URL\"\n\n[[agents]]\nid = \"Bad_Id\"\npackage = \"nowhere\"\n"
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := run("validate", file)
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	for _, want := range []string{file + ":5: agents[0].id: invalid id", file + ":6: agents[0].package: agent folder"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
}

// validate reports every problem with file:line:field, agents by id, and
// syntax errors with their column.
func TestValidateReportsAll(t *testing.T) {
	setExampleEnv(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "deployment.toml")
	src := "[egress]\nupstream_url = \"env:VESSEL_UPSTREAM_MODEL_URL\"\n\n[[apps]]\nid = \"web\"\nkey_sha256 = \"zz\"\nagents = [\"birds\"]\n\n" +
		"[[agents]]\nid = \"birds\"\npackage = \"nowhere\"\n[agents.sandbox]\nscratch = \"lots\"\npids = \"many\"\n"
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := run("validate", file)
	want := []string{
		file + ":6: apps[web].key_sha256: want 64 hex characters",
		file + ":11: agents[birds].package: agent folder",
		file + `:13: agents[birds].sandbox.scratch: invalid size "lots"`,
		file + ":14: agents[birds].sandbox.pids: got a TOML string",
	}
	if code != 1 || strings.Count(errOut, "\n") != len(want) {
		t.Fatalf("exit %d, want 1 and %d lines:\n%s", code, len(want), errOut)
	}
	for i, line := range strings.Split(strings.TrimSuffix(errOut, "\n"), "\n") {
		if !strings.HasPrefix(line, want[i]) {
			t.Errorf("line %d: %s\nwant %s…", i+1, line, want[i])
		}
	}
	if err := os.WriteFile(file, []byte("[vessel]\nport = = 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := run("validate", file); code != 1 || !strings.HasPrefix(errOut, file+":2:8: ") {
		t.Errorf("syntax error: exit %d %q", code, errOut)
	}
}

// The shipped deployment without its variables: say where they come from.
func TestValidateEnvHint(t *testing.T) {
	t.Setenv("VESSEL_UPSTREAM_MODEL_URL", "")
	os.Unsetenv("VESSEL_UPSTREAM_MODEL_URL")
	t.Setenv("VESSEL_APP_KEY_SHA256", "")
	os.Unsetenv("VESSEL_APP_KEY_SHA256")
	if _, err := os.Stat("../../../deploy/.env"); err == nil {
		t.Skip("deploy/.env exists")
	}
	code, _, errOut := run("validate", exampleDeployment)
	if code != 1 || strings.Count(errOut, "is not set") != 2 ||
		!strings.Contains(errOut, "hint: VESSEL_UPSTREAM_MODEL_URL, VESSEL_APP_KEY_SHA256 come from the environment or from ../../../deploy/.env: cp ../../../deploy/.env.example ../../../deploy/.env") {
		t.Errorf("exit %d:\n%s", code, errOut)
	}
	env := filepath.Join(t.TempDir(), "vars.env")
	if err := os.WriteFile(env, []byte("VESSEL_UPSTREAM_MODEL_URL=https://m.example.org/v1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := run("validate", exampleDeployment, "--env-file", env); code != 1 || !strings.Contains(errOut, "hint: VESSEL_APP_KEY_SHA256: set them in "+env) {
		t.Errorf("with --env-file: exit %d:\n%s", code, errOut)
	}
}

func TestEnvFile(t *testing.T) {
	dir := t.TempDir()
	env := filepath.Join(dir, "vars.env")
	if err := os.WriteFile(env, []byte("# comment\nexport VESSEL_UPSTREAM_MODEL_URL=\"https://m.example.org/v1\"\nVESSEL_APP_KEY_SHA256='9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := run("validate", exampleDeployment, "--env-file", env); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
}

func TestUsage(t *testing.T) {
	if code, out, errOut := run(); code != 2 || out != "" || !strings.Contains(errOut, "validate FILE") {
		t.Errorf("no args: exit %d, stdout %q", code, out)
	}
	for _, h := range []string{"--help", "-h", "help"} {
		if code, out, errOut := run(h); code != 0 || errOut != "" || !strings.Contains(out, "up [FILE]") || !strings.Contains(out, "--version") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", h, code, out, errOut)
		}
	}
	// Each subcommand's --help: exit 0, its usage with arguments and its
	// flags on stdout.
	for cmd, want := range map[string]string{
		"validate": "usage: astralvessel validate FILE",
		"deploy":   "usage: astralvessel deploy FILE",
		"up":       "usage: astralvessel up [FILE]",
		"ask":      "usage: astralvessel ask ",
		"usage":    "usage: astralvessel usage ",
	} {
		code, out, errOut := run(cmd, "--help")
		if code != 0 || errOut != "" || !strings.HasPrefix(out, want) || !strings.Contains(out, "flags:\n  -") {
			t.Errorf("%s --help: exit %d, stdout %q, stderr %q", cmd, code, out, errOut)
		}
		if code, out2, _ := run("help", cmd); code != 0 || out2 != out {
			t.Errorf("help %s: exit %d, %q", cmd, code, out2)
		}
	}
	// A flag error: exit 2, the usage line on stderr. up has no -local.
	if code, out, errOut := run("up", "-local"); code != 2 || out != "" ||
		!strings.Contains(errOut, "flag provided but not defined: -local") || !strings.Contains(errOut, "usage: astralvessel up [FILE]") {
		t.Errorf("up -local: exit %d, %q %q", code, out, errOut)
	}
	if code, _, errOut := run("frobnicate"); code != 2 || !strings.Contains(errOut, "validate FILE") {
		t.Errorf("unknown command: exit %d %s", code, errOut)
	}
	if code, _, _ := run("validate"); code != 2 {
		t.Errorf("validate without file: exit %d", code)
	}
}

func TestDeployExample(t *testing.T) {
	setExampleEnv(t)
	out := t.TempDir()
	seccomp := filepath.Join(out, "sandbox.json")
	if err := os.WriteFile(seccomp, []byte(`{"defaultAction":"SCMP_ACT_ERRNO"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, errOut := run("deploy", exampleDeployment, "--out", out, "--seccomp", seccomp)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, errOut)
	}
	yml, err := os.ReadFile(filepath.Join(out, "compose.generated.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"sandbox-field-guide:", "sandbox-field-guide-reader:", "astralvessel_front", "seccomp=" + seccomp} {
		if !bytes.Contains(yml, []byte(want)) {
			t.Errorf("compose file lacks %q", want)
		}
	}
	tok1, err := os.ReadFile(filepath.Join(out, ".generated", "sandbox-master.token"))
	if err != nil {
		t.Fatal(err)
	}
	// A second deploy keeps the tokens.
	if code, _, errOut := run("deploy", exampleDeployment, "--out", out, "--seccomp", seccomp); code != 0 {
		t.Fatalf("second deploy: exit %d %s", code, errOut)
	}
	tok2, _ := os.ReadFile(filepath.Join(out, ".generated", "sandbox-master.token"))
	if !bytes.Equal(tok1, tok2) {
		t.Error("master token changed on re-deploy")
	}
}

func TestFindSource(t *testing.T) {
	dir, err := findSource(filepath.Dir(exampleDeployment))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.work")); err != nil {
		t.Errorf("found %s without go.work", dir)
	}
}

// The reader example must stay read-only: file tools only, no shell, web,
// declared commands or files out.
func TestReaderExampleIsReadOnly(t *testing.T) {
	m, err := spec.LoadPackage("../../../examples/field-guide-reader", os.LookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range m.Tools.Enabled {
		if spec.BuiltinTools[tool] != "tools:files" {
			t.Errorf("reader enables %s (%s)", tool, spec.BuiltinTools[tool])
		}
	}
	if len(m.Declared) != 0 || len(m.Output.Files) != 0 {
		t.Errorf("reader declares tools %v or files %v", m.Declared, m.Output.Files)
	}
	g, err := spec.LoadPackage("../../../examples/field-guide", os.LookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Declared) != 1 || g.Declared[0].Name != "species" || g.Declared[0].Scope != "tools:read" {
		t.Errorf("field-guide tools: %+v", g.Declared)
	}
}

// The notebook example brings a stdio MCP server and nothing else of its own.
func TestNotebookExample(t *testing.T) {
	m, err := spec.LoadPackage("../../../examples/notebook", os.LookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	srv := m.StdioMCP("notes")
	if len(m.Declared) != 0 || len(m.MCP) != 1 || srv == nil || srv.MCP.Command[0] != "{package}/bin/notes-mcp" {
		t.Fatalf("notebook: declared %+v, MCP %+v", m.Declared, m.MCP)
	}
	if g := srv.MCP.Grant(); g.ToolScope("add_note") != "tools:write" || g.ToolScope("read_note") != "tools:files" {
		t.Errorf("scopes: %+v", g)
	}
}

func TestWarnings(t *testing.T) {
	d := &spec.Deployment{
		Apps:    []spec.App{{ID: "web", Agents: []string{"a"}}},
		Issuers: []spec.Issuer{{ID: "idp", Agents: []string{"b"}}},
		Agents:  []spec.Agent{{ID: "a"}, {ID: "b"}, {ID: "c"}},
	}
	w := warnings(d)
	if len(w) != 1 || !strings.Contains(w[0], "agent c") {
		t.Errorf("warnings: %q", w)
	}
}

// The species tool behind the demo's answer keeps only the species whose
// account mentions the word: for "fish", the reed heron alone.
func TestSpeciesToolMentions(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	species := func(args string) []string {
		t.Helper()
		cmd := exec.Command(py, "../../../examples/field-guide/tools/species.py")
		cmd.Stdin = strings.NewReader(args)
		cmd.Env = append(os.Environ(), "GUIDE_DIR=../../../examples/field-guide/data")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("species %s: %v %s", args, err, out)
		}
		var list []struct {
			Slug string `json:"slug"`
		}
		if err := json.Unmarshal(out, &list); err != nil {
			t.Fatalf("species %s: %v %s", args, err, out)
		}
		var slugs []string
		for _, s := range list {
			slugs = append(slugs, s.Slug)
		}
		return slugs
	}
	if got := species(`{"mentions":"fish"}`); len(got) != 1 || got[0] != "larchmere-reed-heron" {
		t.Errorf("mentions fish: %v", got)
	}
	if got := species(`{"mentions":"zebra"}`); len(got) != 0 {
		t.Errorf("mentions zebra: %v", got)
	}
	if got := species(`{}`); len(got) != 7 {
		t.Errorf("all: %v", got)
	}
}

// The real binary: --version prints the version and commit stamped with
// -ldflags on stdout, and --help goes to stdout with exit 0.
func TestBinaryVersionAndHelp(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "astralvessel")
	build := exec.Command("go", "build", "-ldflags", "-X main.version=v9.8.7 -X main.commit=0123abcd", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for args, want := range map[string]string{"--version": "astralvessel v9.8.7 (commit 0123abcd)\n", "version": "astralvessel v9.8.7 (commit 0123abcd)\n"} {
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(bin, args)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil || stdout.String() != want || stderr.Len() != 0 {
			t.Errorf("%s: %v, stdout %q, stderr %q", args, err, stdout.String(), stderr.String())
		}
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, "ask", "--help")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil || !strings.HasPrefix(stdout.String(), "usage: astralvessel ask") || stderr.Len() != 0 {
		t.Errorf("ask --help: %v, stdout %q, stderr %q", err, stdout.String(), stderr.String())
	}
}

func TestVersionLineFallback(t *testing.T) {
	v, c := version, commit
	t.Cleanup(func() { version, commit = v, c })
	version, commit = "", ""
	if got := versionLine(); !strings.HasPrefix(got, "astralvessel ") || !strings.Contains(got, "commit") {
		t.Errorf("versionLine: %q", got)
	}
	version, commit = "v1", "abc"
	if got := versionLine(); got != "astralvessel v1 (commit abc)" {
		t.Errorf("versionLine: %q", got)
	}
}

// deploy/postgres-test.sh runs a command against a private cluster and
// leaves nothing behind, whatever the command's outcome.
func TestPostgresTestScript(t *testing.T) {
	if _, err := os.Stat("/usr/lib/postgresql/15/bin/initdb"); err != nil {
		t.Skip("PostgreSQL 15 server binaries not installed")
	}
	if testing.Short() {
		t.Skip("starts a PostgreSQL cluster")
	}
	tmp, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	if err := os.Chmod(tmp, 0o755); err != nil { // the postgres user works in it
		t.Fatal(err)
	}
	out := filepath.Join(tmp, "dsn")
	cmd := exec.Command("../../../deploy/postgres-test.sh", "sh", "-c",
		`/usr/lib/postgresql/15/bin/psql "$VESSEL_TEST_POSTGRES" -Atc "select current_user" >"$0" && echo "$VESSEL_TEST_POSTGRES" >>"$0"; exit 7`, out)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	msgs, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 7 {
		t.Fatalf("exit %v, want 7 (the command's):\n%s", err, msgs)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 || lines[0] != "vessel_test" || !strings.HasPrefix(lines[1], "postgres://vessel_test:") {
		t.Fatalf("command saw %q\n%s", b, msgs)
	}
	// The cluster is gone: its folder and its port.
	if left, _ := filepath.Glob(filepath.Join(tmp, "vessel-pg.*")); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
	host := strings.TrimPrefix(lines[1], "postgres://")
	host = host[strings.Index(host, "@")+1 : strings.Index(host, "/")]
	if c, err := net.Dial("tcp", host); err == nil {
		c.Close()
		t.Errorf("something still listens on %s", host)
	}
}
