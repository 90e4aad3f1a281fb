// Package benchenv reads what a benchmark or load run reports beside its
// figures: the machine's load average (other work on the machine moves
// wall-clock figures) and the CPU time of this process and its children.
// It is the one reader of /proc/loadavg and getrusage for the benchmarks,
// the load runs and their test harnesses.
package benchenv

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// LoadAvg is the machine's 1, 5 and 15 minute load averages as
// /proc/loadavg writes them ("2.91 10.57 12.92"), "unknown" when it cannot
// be read.
func LoadAvg() string {
	f := loadFields()
	if f == nil {
		return "unknown"
	}
	return strings.Join(f, " ")
}

// Load1 is the 1-minute load average, 0 when unknown.
func Load1() float64 {
	f := loadFields()
	if f == nil {
		return 0
	}
	l, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return 0
	}
	return l
}

func loadFields() []string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return nil
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return nil
	}
	return f[:3]
}

// CPUTime is this process's user plus system CPU time so far, 0 when it
// cannot be read.
func CPUTime() time.Duration { return rusage(syscall.RUSAGE_SELF) }

// ChildrenCPUTime is the user plus system CPU time of this process's
// children that have been waited for, 0 when it cannot be read.
func ChildrenCPUTime() time.Duration { return rusage(syscall.RUSAGE_CHILDREN) }

func rusage(who int) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
