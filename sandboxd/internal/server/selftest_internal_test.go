package server

import (
	"errors"
	"strings"
	"testing"

	"github.com/astraldeep/astralvessel-go/sandboxd/internal/confine"
	"golang.org/x/sys/unix"
)

// TestConfinementFailureSaysHowToFix covers the launcher failures this
// host cannot produce for real (a container profile that blocks seccomp(2)
// or landlock_restrict_self, too many nested filters or domains).
func TestConfinementFailureSaysHowToFix(t *testing.T) {
	for _, tc := range []struct {
		step  string
		errno unix.Errno
		want  []string
	}{
		{confine.StepSeccomp, unix.EPERM, []string{"blocks seccomp(2)", "before 23.0", "seccomp=" + confine.SeccompProfile}},
		{confine.StepSeccomp, unix.EACCES, []string{"seccomp=" + confine.SeccompProfile}},
		{confine.StepSeccomp, unix.ENOMEM, []string{"no room", confine.SeccompProfile}},
		{confine.StepSeccomp, unix.EINVAL, []string{"CONFIG_SECCOMP_FILTER=y"}},
		{confine.StepLandlock, unix.EPERM, []string{"landlock_restrict_self", "before 23.0", "seccomp=" + confine.SeccompProfile}},
		{confine.StepLandlock, unix.ENOSYS, []string{"before 23.0", "seccomp=" + confine.SeccompProfile}},
		{confine.StepLandlock, unix.E2BIG, []string{"16", "fewer Landlock layers"}},
		{confine.StepLandlock, unix.EINVAL, []string{"Landlock ABI 6", "lsm="}},
		{confine.StepNoNewPrivs, unix.EPERM, []string{"no_new_privs", "PR_SET_NO_NEW_PRIVS"}},
	} {
		step := &confine.StepError{Step: tc.step, Errno: tc.errno}
		err := confinementFailure(step)
		if err == nil {
			t.Errorf("%v: no explanation", step)
			continue
		}
		if !errors.Is(err, tc.errno) || !strings.Contains(err.Error(), tc.step) {
			t.Errorf("%v: the explanation lost the step or errno: %v", step, err)
		}
		for _, w := range append(tc.want, "calls cannot be confined") {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: %q lacks %q", step, err, w)
			}
		}
	}
	// Anything else keeps the self-test's own message.
	for _, err := range []error{nil, errors.New("exec: no such file"), &confine.StepError{Step: "switching user", Errno: unix.EPERM}} {
		if got := confinementFailure(err); got != nil {
			t.Errorf("%v explained as a confinement failure: %v", err, got)
		}
	}
}
