package confine

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// Isolation tiers: what stands between a call and the host.
const (
	// TierConfined: Landlock, seccomp and a uid per turn on the host kernel.
	TierConfined = "confined"
	// TierGVisor: gVisor's user-space kernel (runsc) is the boundary;
	// seccomp and a uid per turn still hold inside it, Landlock does not
	// (gVisor answers ENOSYS).
	TierGVisor = "gvisor"
)

// ParseTier checks a --tier value.
func ParseTier(s string) (string, error) {
	switch s {
	case TierConfined, TierGVisor:
		return s, nil
	}
	return "", fmt.Errorf("unknown tier %q; allowed: %s, %s", s, TierConfined, TierGVisor)
}

// gVisor's sentry gives every sandbox the same made-up kernel build line
// and greets in its kernel log; either says the kernel is gVisor's.
const (
	gvisorVersion = "#1 SMP Sun Jan 10 15:06:54 PST 2016"
	gvisorLog     = "Starting gVisor"
)

// underGVisor guesses from /proc/version and the kernel log whether the
// running kernel is gVisor's.
func underGVisor() bool {
	if b, err := os.ReadFile("/proc/version"); err == nil && strings.Contains(string(b), gvisorVersion) {
		return true
	}
	buf := make([]byte, 1<<16)
	n, err := unix.Klogctl(unix.SYSLOG_ACTION_READ_ALL, buf)
	return err == nil && n > 0 && strings.Contains(string(buf[:n]), gvisorLog)
}

// CheckTier is Check for the tier the deployment asked for. The confined
// tier needs Landlock and refuses gVisor (where Landlock is absent); the
// gvisor tier needs gVisor and seccomp, and Landlock's absence is expected
// there. It returns the Landlock ABI (0 in the gvisor tier).
func (k Kernel) CheckTier(tier string) (int, error) {
	gv := k.GVisor != nil && k.GVisor()
	switch tier {
	case TierConfined:
		if gv {
			return 0, errors.New("the kernel is gVisor's, which has no Landlock, but the deployment asked for the " +
				"confined tier: set [agents.sandbox] runtime = \"gvisor\" or run the sandbox on the engine's default runtime")
		}
		return k.Check()
	case TierGVisor:
		if !gv {
			return 0, errors.New("the deployment asked for the gvisor tier but the kernel is not gVisor's: the engine " +
				"did not run this container under runsc (Docker: register runsc in daemon.json; Kubernetes: a " +
				"RuntimeClass gvisor whose handler is runsc on the node)")
		}
		// gVisor has no SECCOMP_GET_ACTION_AVAIL (EINVAL) though it runs
		// filters: there the start-up self-test, which installs the call
		// filter for real, is the proof.
		errnoAvail := k.SeccompErrnoAvail
		k.SeccompErrnoAvail = func() error {
			if err := errnoAvail(); err != nil && !errors.Is(err, unix.EINVAL) {
				return err
			}
			return nil
		}
		return 0, k.checkSeccomp()
	}
	_, err := ParseTier(tier)
	return 0, err
}
