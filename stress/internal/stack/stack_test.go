package stack

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/astraldeep/astralvessel-go/deployer/spec"
)

func TestGeneratedDeploymentLoads(t *testing.T) {
	for _, pg := range []string{"", "postgres://u:p@127.0.0.1:5432/db?sslmode=disable"} {
		s := &Stack{cfg: Config{Dir: t.TempDir(), ScratchSize: "1GiB", Postgres: pg}}
		path, master, err := s.writeDeployment("127.0.0.1:9")
		if err != nil {
			t.Fatal(err)
		}
		if master == "" || s.AppKey == "" {
			t.Fatal("no master token or app key")
		}
		d, err := spec.LoadDeployment(path, func(string) (string, bool) { return "", false })
		if err != nil {
			t.Fatalf("the generated deployment does not load: %v", err)
		}
		if d.Vessel.TaskStore != pg {
			t.Fatalf("task_store = %q, want %q", d.Vessel.TaskStore, pg)
		}
		if len(d.Agents) != 1 || d.Agents[0].ID != AgentID {
			t.Fatalf("agents = %+v", d.Agents)
		}
		if _, err := spec.Fingerprint(d, AgentID); err != nil {
			t.Fatalf("fingerprint: %v", err)
		}
		b, err := os.ReadFile(filepath.Join(s.cfg.Dir, ".generated", "sandbox-master.token"))
		if err != nil || string(b) != master {
			t.Fatalf("master token file = %q, %v", b, err)
		}
	}
}

func TestProcMeasures(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Skipf("cannot start sleep: %v", err)
	}
	p := &Proc{Name: "sleep", cmd: cmd, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	if rss := p.PeakRSS(); rss <= 0 {
		t.Errorf("PeakRSS = %d, want > 0", rss)
	}
	if cpu := p.CPUSeconds(); cpu < 0 {
		t.Errorf("CPUSeconds = %v", cpu)
	}
	p.Kill()
	if exited, _ := p.Exited(); !exited {
		t.Fatal("the process is still running after Kill")
	}
	if rss := p.PeakRSS(); rss <= 0 {
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
