package stack

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/astraldeep/astralvessel-go/deployer/spec"
)

func TestGeneratedDeploymentLoads(t *testing.T) {
	for _, pg := range []string{"", "postgres://u:p@127.0.0.1:5432/db?sslmode=disable"} {
		s := &Stack{cfg: Config{Dir: t.TempDir(), Project: RunProject(), ScratchSize: "1GiB", Postgres: pg, AgentTOML: "[agents.approval]\ntools = [\"bash\"]\n"}}
		path, err := s.writeDeployment()
		if err != nil {
			t.Fatal(err)
		}
		// What the local stack sets.
		env := map[string]string{"VESSEL_UPSTREAM_MODEL_URL": "https://scripted-model.localhost/v1", appKeyVar: strings.Repeat("ab", 32)}
		d, err := spec.LoadDeployment(path, func(n string) (string, bool) { v, ok := env[n]; return v, ok })
		if err != nil {
			t.Fatalf("the generated deployment does not load: %v", err)
		}
		if d.Vessel.TaskStore != pg {
			t.Fatalf("task_store = %q, want %q", d.Vessel.TaskStore, pg)
		}
		if len(d.Agents) != 1 || d.Agents[0].ID != AgentID || d.Agents[0].Approval == nil {
			t.Fatalf("agents = %+v", d.Agents)
		}
		if _, err := spec.Fingerprint(d, AgentID); err != nil {
			t.Fatalf("fingerprint: %v", err)
		}
		// The run's own project, and the call uids derived from it.
		if d.Vessel.Project != s.cfg.Project || d.Agents[0].Sandbox.UIDs.First != spec.ProjectCallUIDBase(s.cfg.Project) {
			t.Fatalf("project %q uids %s; want %q and the block derived from it", d.Vessel.Project, d.Agents[0].Sandbox.UIDs, s.cfg.Project)
		}
	}
}

// TestRunProjectsDiffer: two runs of one process get different projects,
// both valid project names carrying the pid.
func TestRunProjectsDiffer(t *testing.T) {
	a, b := RunProject(), RunProject()
	if a == b {
		t.Fatalf("two runs got the same project %q", a)
	}
	for _, p := range []string{a, b} {
		if !strings.HasPrefix(p, "astralvessel-load-"+strconv.Itoa(os.Getpid())+"-") {
			t.Fatalf("project %q does not carry the pid", p)
		}
	}
}

func TestProcMeasures(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatalf("cannot start sleep: %v", err)
	}
	m := &meter{pid: cmd.Process.Pid}
	if rss := m.PeakRSS(); rss <= 0 {
		t.Errorf("PeakRSS = %d, want > 0", rss)
	}
	if cpu := m.CPUSeconds(); cpu < 0 {
		t.Errorf("CPUSeconds = %v", cpu)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if rss := m.PeakRSS(); rss <= 0 {
		t.Errorf("PeakRSS after exit = %d, want the last value read", rss)
	}
}

func TestScratchLeft(t *testing.T) {
	s := &Stack{Scratch: t.TempDir()}
	if n, b, err := s.ScratchLeft(); err != nil || n != 0 || b != 0 {
		t.Fatalf("empty scratch: %d entries, %d bytes, %v", n, b, err)
	}
	if err := os.MkdirAll(filepath.Join(s.Scratch, "turn-1", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.Scratch, "turn-1", "sub", "f"), []byte("12345"), 0o644); err != nil {
		t.Fatal(err)
	}
	n, b, err := s.ScratchLeft()
	if err != nil || n != 3 || b != 5 {
		t.Fatalf("scratch: %d entries, %d bytes, %v; want 3 and 5", n, b, err)
	}
	s.Scratch = filepath.Join(s.Scratch, "missing")
	if n, _, err := s.ScratchLeft(); err != nil || n != 0 {
		t.Fatalf("missing scratch: %d, %v", n, err)
	}
}

// As root, the scratch can be a tmpfs as in a deployment: mounted by
// mountScratch, gone again after Stop.
func TestScratchTmpfs(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root (CI runs this test as root)")
	}
	s := &Stack{cfg: Config{ScratchSize: "64MiB"}, root: t.TempDir()}
	if err := s.mountScratch(); err != nil {
		t.Fatal(err)
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(s.root, &st); err != nil {
		t.Fatal(err)
	}
	const tmpfsMagic = 0x01021994
	if st.Type != tmpfsMagic {
		t.Fatalf("scratch file system type %#x, want tmpfs", st.Type)
	}
	if got := int64(st.Blocks) * st.Bsize; got != 64<<20 {
		t.Errorf("tmpfs size %d, want %d", got, 64<<20)
	}
	if !mountedAt(t, s.root) {
		t.Fatal("no mount listed at the scratch")
	}
	s.Stop()
	if mountedAt(t, s.root) {
		t.Fatal("the scratch tmpfs is still mounted after Stop")
	}
	s = &Stack{cfg: Config{ScratchSize: "lots"}, root: t.TempDir()}
	if err := s.mountScratch(); err == nil {
		t.Fatal("a bad scratch size was accepted")
	}
}

// mountedAt says whether /proc/self/mountinfo lists a mount point at dir.
func mountedAt(t *testing.T, dir string) bool {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 4 && f[4] == dir {
			return true
		}
	}
	return false
}

// When the tmpfs cannot be mounted, auto mode keeps the folder and says so;
// an explicit tmpfs request fails instead.
func TestScratchTmpfsFallback(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "not-there") // mount(2) fails: no such folder
	s := &Stack{cfg: Config{ScratchSize: "64MiB", ScratchTmpfs: true, ScratchFallback: true}, root: missing}
	if err := s.prepareScratch(); err != nil || s.ScratchKind() != "dir" {
		t.Fatalf("auto: err %v, kind %s; want the folder kept", err, s.ScratchKind())
	}
	s = &Stack{cfg: Config{ScratchSize: "64MiB", ScratchTmpfs: true}, root: missing}
	if err := s.prepareScratch(); err == nil {
		t.Fatal("an explicit tmpfs that cannot be mounted was not an error")
	}
}

// TestLimitsForUsers: a run of more users than the default caps carry gets
// a [limits] table, which the deployment loader takes, that lets them all
// run; a small run keeps the defaults.
func TestLimitsForUsers(t *testing.T) {
	env := map[string]string{"VESSEL_UPSTREAM_MODEL_URL": "https://scripted-model.localhost/v1", appKeyVar: strings.Repeat("ab", 32)}
	for _, users := range []int{50, 1000} {
		s := &Stack{cfg: Config{Dir: t.TempDir(), Project: RunProject(), ScratchSize: "1GiB", Users: users}}
		path, err := s.writeDeployment()
		if err != nil {
			t.Fatal(err)
		}
		d, err := spec.LoadDeployment(path, func(n string) (string, bool) { v, ok := env[n]; return v, ok })
		if err != nil {
			t.Fatalf("%d users: the generated deployment does not load: %v", users, err)
		}
		l := d.Limits.WithDefaults()
		want := max(users, spec.DefaultMaxTurnsPerApp)
		if l.MaxTurnsPerApp != want || l.MaxTurnsPerAgent < want || l.MaxTurns < want || l.RequestBurstPerApp < 2*min(users, 200) {
			t.Fatalf("%d users: limits %+v", users, l)
		}
	}
}
