package confine

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestBuildFilter(t *testing.T) {
	bpf, err := BuildFilter()
	if err != nil {
		t.Fatal(err)
	}
	if len(bpf) == 0 || len(bpf)%8 != 0 {
		t.Fatalf("filter of %d bytes", len(bpf))
	}
}

func TestSpecEncode(t *testing.T) {
	s := Spec{Path: "/bin/true", Argv: []string{"true"}, Env: []string{"A=1"}, ReadOnly: []string{"/usr"},
		ReadWrite: []string{"/w"}, Limits: Limits{NoFile: 4096}, Filter: make([]byte, 16)}
	b, err := s.encode()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("SBXL1\x00")) || !bytes.Contains(b, []byte("/bin/true\x00")) {
		t.Fatalf("encoding %q", b)
	}
	s.Argv = []string{"a\x00b"}
	if _, err := s.encode(); err == nil {
		t.Fatal("NUL in argv accepted")
	}
}

func TestLandlockErrorsSayHowToFix(t *testing.T) {
	for err, want := range map[error]string{
		unix.EPERM:      SeccompProfile,
		unix.EOPNOTSUPP: "lsm=",
	} {
		if msg := landlockError(err).Error(); !strings.Contains(msg, want) {
			t.Errorf("%v: %q lacks %q", err, msg, want)
		}
	}
	if msg := landlockError(unix.ENOSYS).Error(); !strings.Contains(msg, "6.12") && !strings.Contains(msg, SeccompProfile) {
		t.Errorf("ENOSYS: %q", msg)
	}
}

func TestReapOrphansLeavesTrackedChildren(t *testing.T) {
	// Two children: one tracked (its owner waits for it), one an orphan.
	mine, err := os.StartProcess("/bin/true", []string{"true"}, &os.ProcAttr{})
	if err != nil {
		t.Fatal(err)
	}
	orphan, err := os.StartProcess("/bin/true", []string{"true"}, &os.ProcAttr{})
	if err != nil {
		t.Fatal(err)
	}
	track(mine.Pid)
	defer untrack(mine.Pid)
	time.Sleep(100 * time.Millisecond) // both are zombies now
	reapOrphans()
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", orphan.Pid)); !os.IsNotExist(err) {
		t.Fatalf("orphan %d not reaped: %v", orphan.Pid, err)
	}
	if st, err := mine.Wait(); err != nil || !st.Success() {
		t.Fatalf("tracked child reaped by the reaper: %v", err)
	}
}
