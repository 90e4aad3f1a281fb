package confine

import (
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

func TestLookPath(t *testing.T) {
	p, err := LookPath("true", []string{"PATH=/nonexistent:/usr/bin:/bin"})
	if err != nil || !strings.HasSuffix(p, "/true") {
		t.Fatalf("LookPath: %q %v", p, err)
	}
	if _, err := LookPath("no-such-program-here", []string{"PATH=/usr/bin"}); err == nil {
		t.Fatal("found a missing program")
	}
}

func TestLandlockErrorsSayHowToFix(t *testing.T) {
	for err, want := range map[error]string{
		unix.EPERM:      SeccompProfile,
		unix.EOPNOTSUPP: "lsm=",
	} {
		if msg := landlockError(err, false).Error(); !strings.Contains(msg, want) {
			t.Errorf("%v: %q lacks %q", err, msg, want)
		}
	}
	if msg := landlockError(unix.ENOSYS, false).Error(); !strings.Contains(msg, "6.12") && !strings.Contains(msg, SeccompProfile) {
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
