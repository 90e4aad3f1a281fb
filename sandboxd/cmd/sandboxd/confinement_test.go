package main

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/astraldeep/astralvessel-go/sandboxd/internal/confine"
	"golang.org/x/sys/unix"
)

// fakeKernel answers like a kernel that confines fine, in or out of a
// container; each case breaks one answer.
func fakeKernel(container bool) confine.Kernel {
	return confine.Kernel{
		LandlockABI:       func() (int, error) { return 7, nil },
		SeccompMode:       func() error { return nil },
		SeccompErrnoAvail: func() error { return nil },
		InContainer:       func() bool { return container },
	}
}

// gvisorKernel answers as gVisor's sentry does: no Landlock, seccomp.
func gvisorKernel() confine.Kernel {
	k := fakeKernel(true)
	k.LandlockABI = func() (int, error) { return 0, unix.ENOSYS }
	k.GVisor = func() bool { return true }
	return k
}

// TestStartRefusesWithoutConfinement runs sandboxd's start-up in process
// with kernel answers that cannot confine and checks that it refuses
// before compiling the filter or listening, with a message that says what
// is missing and how to fix it. The last case uses the real kernel and a
// filter it refuses, so the confined self-test call fails at the seccomp
// step.
func TestStartRefusesWithoutConfinement(t *testing.T) {
	profile := "seccomp=" + confine.SeccompProfile
	for _, tc := range []struct {
		name   string
		kernel func() confine.Kernel
		want   []string
		args   []string
	}{
		{"landlock ABI below 6", func() confine.Kernel {
			k := fakeKernel(false)
			k.LandlockABI = func() (int, error) { return 5, nil }
			return k
		}, []string{"Landlock ABI 5", "ABI 6 or newer", "Linux 6.12", "newer kernel"}, nil},
		{"no landlock in the kernel", func() confine.Kernel {
			k := fakeKernel(false)
			k.LandlockABI = func() (int, error) { return 0, unix.ENOSYS }
			return k
		}, []string{"no Landlock", "CONFIG_SECURITY_LANDLOCK=y", "6.12"}, nil},
		{"landlock not enabled", func() confine.Kernel {
			k := fakeKernel(false)
			k.LandlockABI = func() (int, error) { return 0, unix.EOPNOTSUPP }
			return k
		}, []string{"not enabled", "lsm="}, nil},
		{"docker before 23: EPERM from landlock_create_ruleset", func() confine.Kernel {
			k := fakeKernel(true)
			k.LandlockABI = func() (int, error) { return 0, unix.EPERM }
			return k
		}, []string{"landlock_create_ruleset", "operation not permitted", "Docker engines before 23.0", profile, "upgrade Docker"}, nil},
		{"docker before 23: ENOSYS from landlock_create_ruleset", func() confine.Kernel {
			k := fakeKernel(true)
			k.LandlockABI = func() (int, error) { return 0, unix.ENOSYS }
			return k
		}, []string{"landlock_create_ruleset", "function not implemented", "Docker engines before 23.0", profile}, nil},
		{"EPERM from landlock_create_ruleset outside a known container", func() confine.Kernel {
			k := fakeKernel(false)
			k.LandlockABI = func() (int, error) { return 0, unix.EPERM }
			return k
		}, []string{"landlock_create_ruleset", "blocks the Landlock syscalls", "Docker before 23.0", profile}, nil},
		{"no seccomp in the kernel", func() confine.Kernel {
			k := fakeKernel(false)
			k.SeccompMode = func() error { return unix.EINVAL }
			return k
		}, []string{"no seccomp", "CONFIG_SECCOMP_FILTER=y"}, nil},
		{"seccomp blocked in the container", func() confine.Kernel {
			k := fakeKernel(true)
			k.SeccompErrnoAvail = func() error { return unix.EPERM }
			return k
		}, []string{"seccomp(2) is blocked", profile}, nil},
		{"seccomp filter mode unavailable", func() confine.Kernel {
			k := fakeKernel(false)
			k.SeccompErrnoAvail = func() error { return unix.EOPNOTSUPP }
			return k
		}, []string{"seccomp filter mode is unavailable", "CONFIG_SECCOMP_FILTER=y"}, nil},
		{"confined tier under gVisor", func() confine.Kernel {
			k := gvisorKernel()
			return k
		}, []string{"gVisor's", "confined tier", `runtime = "gvisor"`}, nil},
		{"gvisor tier on the host kernel", func() confine.Kernel {
			return fakeKernel(true)
		}, []string{"gvisor tier", "not gVisor's", "runsc", "RuntimeClass"}, []string{"--tier", "gvisor"}},
		{"gvisor tier without seccomp", func() confine.Kernel {
			k := gvisorKernel()
			k.SeccompErrnoAvail = func() error { return unix.EPERM }
			return k
		}, []string{"seccomp(2) is blocked", profile}, []string{"--tier", "gvisor"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, pkg := agentDir(t)
			t.Setenv("VESSEL_SANDBOX_TOKEN", "x")
			built := false
			err := run(append([]string{"--agent", "a", "--package", pkg, "--tools", testTools, "--scratch", filepath.Join(base, "scratch"),
				"--listen", freeAddr(t)}, tc.args...), tc.kernel(), func() ([]byte, error) {
				// Failing here keeps a start-up that skips the kernel
				// check from going on to serve (and the test from hanging).
				built = true
				return nil, errors.New("filter compiled despite the failed kernel check")
			})
			if err == nil {
				t.Fatal("start-up did not refuse")
			}
			if built {
				t.Error("start-up went on to compile the filter after the kernel check failed")
			}
			for _, w := range append(tc.want, "refusing to start, calls cannot be confined") {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("refusal lacks %q:\n%v", w, err)
				}
			}
		})
	}

	// In the gvisor tier Landlock's ENOSYS is expected: start-up goes
	// past the kernel check to the filter.
	t.Run("gvisor tier without Landlock passes the kernel check", func(t *testing.T) {
		base, pkg := agentDir(t)
		t.Setenv("VESSEL_SANDBOX_TOKEN", "x")
		stop := errors.New("filter stage reached")
		err := run([]string{"--agent", "a", "--package", pkg, "--tools", testTools, "--scratch", filepath.Join(base, "scratch"),
			"--listen", freeAddr(t), "--tier", "gvisor"}, gvisorKernel(), func() ([]byte, error) { return nil, stop })
		if !errors.Is(err, stop) {
			t.Fatalf("start-up = %v, want it to reach the filter", err)
		}
	})

	t.Run("seccomp filter install fails", func(t *testing.T) {
		requireKernel(t)
		base, pkg := agentDir(t)
		t.Setenv("VESSEL_SANDBOX_TOKEN", "x")
		// One instruction classic BPF does not have: the launcher's
		// seccomp(SECCOMP_SET_MODE_FILTER) fails with EINVAL.
		bad := func() ([]byte, error) { return []byte{0xff, 0xff, 0, 0, 0, 0, 0, 0}, nil }
		err := run([]string{"--agent", "a", "--package", pkg, "--tools", testTools, "--scratch", filepath.Join(base, "scratch"),
			"--listen", freeAddr(t), "--uid-range", "510048:16"}, confine.HostKernel(), bad)
		if err == nil {
			t.Fatal("start-up did not refuse")
		}
		for _, w := range []string{"refusing to start", "calls cannot be confined", confine.StepSeccomp,
			"invalid argument", "CONFIG_SECCOMP_FILTER=y"} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("refusal lacks %q:\n%v", w, err)
			}
		}
	})
}
