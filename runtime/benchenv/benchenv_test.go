package benchenv

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/astraldeep/astralvessel-go/runtime/testenv"
)

// TestLoadAvg: the three averages, the first of them Load1.
func TestLoadAvg(t *testing.T) {
	_, err := os.Stat("/proc/loadavg")
	testenv.Require(t, err == nil, "no /proc/loadavg")
	f := strings.Fields(LoadAvg())
	if len(f) != 3 {
		t.Fatalf("LoadAvg %q: want three figures", LoadAvg())
	}
	for _, s := range f {
		if _, err := strconv.ParseFloat(s, 64); err != nil {
			t.Fatalf("LoadAvg %q: %v", LoadAvg(), err)
		}
	}
	if l := Load1(); l < 0 {
		t.Fatalf("Load1 %v", l)
	}
}

// TestCPUTime: the process's CPU time only grows with work, and a child
// waited for counts in ChildrenCPUTime.
func TestCPUTime(t *testing.T) {
	c0 := CPUTime()
	x := 0
	for i := range 20_000_000 {
		x += i % 7
	}
	if x == 0 || CPUTime() < c0 || CPUTime() == 0 {
		t.Fatalf("CPU time %v then %v", c0, CPUTime())
	}
	k0 := ChildrenCPUTime()
	sh, err := exec.LookPath("sh")
	testenv.Require(t, err == nil, "no sh")
	if err := exec.Command(sh, "-c", "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done").Run(); err != nil {
		t.Fatal(err)
	}
	if k := ChildrenCPUTime(); k < k0 {
		t.Fatalf("children's CPU time went from %v to %v", k0, k)
	}
}
