// Package confine confines one tool call: a fresh process group, rlimits,
// Landlock and a seccomp filter, applied in the child (spawn.c) just before
// it execs the tool's program.
package confine

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"unsafe"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// MinLandlockABI is the oldest Landlock ABI that has signal and abstract
// unix socket scoping; without it a call could signal other processes.
const MinLandlockABI = 6

// SeccompProfile is the seccomp profile shipped for sandbox containers.
const SeccompProfile = "deploy/seccomp/sandbox.json"

// Kernel is what Check asks the kernel. HostKernel asks the real one;
// tests substitute answers to see what start-up says about a kernel or a
// container that cannot confine.
type Kernel struct {
	// LandlockABI is landlock_create_ruleset's version query.
	LandlockABI func() (int, error)
	// SeccompMode is prctl(PR_GET_SECCOMP).
	SeccompMode func() error
	// SeccompErrnoAvail is seccomp(SECCOMP_GET_ACTION_AVAIL) for
	// SECCOMP_RET_ERRNO, which needs neither privileges nor a filter.
	SeccompErrnoAvail func() error
	// InContainer guesses whether we run in a container, only to word errors.
	InContainer func() bool
	// GVisor says whether the kernel is gVisor's (CheckTier).
	GVisor func() bool
}

// HostKernel asks the running kernel.
func HostKernel() Kernel {
	return Kernel{
		LandlockABI: ll.LandlockGetABIVersion,
		SeccompMode: func() error {
			_, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0)
			return err
		},
		SeccompErrnoAvail: func() error {
			action := uint32(unix.SECCOMP_RET_ERRNO)
			_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_GET_ACTION_AVAIL, 0, uintptr(unsafe.Pointer(&action)))
			if errno != 0 {
				return errno
			}
			return nil
		},
		InContainer: inContainer,
		GVisor:      underGVisor,
	}
}

// Check reports the running kernel's Landlock ABI and an error that says
// what is missing and how to fix it, unless Landlock ABI >= 6 and seccomp
// filters are available to this (possibly unprivileged) process.
func Check() (int, error) { return HostKernel().Check() }

// Check is the package-level Check against k's answers.
func (k Kernel) Check() (int, error) {
	abi, err := k.LandlockABI()
	if err != nil {
		return 0, landlockError(err, k.InContainer())
	}
	if abi < MinLandlockABI {
		return abi, fmt.Errorf("the kernel offers Landlock ABI %d, sandboxd needs ABI %d or newer "+
			"(Linux 6.12+) for signal and abstract socket scoping: run the sandbox on a newer kernel", abi, MinLandlockABI)
	}
	if err := k.checkSeccomp(); err != nil {
		return abi, err
	}
	return abi, nil
}

func landlockError(err error, container bool) error {
	switch {
	case errors.Is(err, unix.EPERM) || (errors.Is(err, unix.ENOSYS) && container):
		if container {
			return fmt.Errorf("landlock_create_ruleset failed with %w inside a container: the container's seccomp "+
				"profile blocks the Landlock syscalls (Docker engines before 23.0 do so by default); start the "+
				"container with our profile (security_opt: seccomp=%s, as `astralvessel deploy` generates) "+
				"or upgrade Docker to 23.0 or newer", err, SeccompProfile)
		}
		return fmt.Errorf("landlock_create_ruleset failed with %w: a seccomp filter or security policy around "+
			"sandboxd blocks the Landlock syscalls; allow landlock_create_ruleset, landlock_add_rule and "+
			"landlock_restrict_self (see %s; in a container under Docker before 23.0, start it with "+
			"security_opt seccomp=%s)", err, SeccompProfile, SeccompProfile)
	case errors.Is(err, unix.ENOSYS):
		return fmt.Errorf("the kernel has no Landlock (%w): sandboxd needs Linux 6.12 or newer built with "+
			"CONFIG_SECURITY_LANDLOCK=y", err)
	case errors.Is(err, unix.EOPNOTSUPP):
		return fmt.Errorf("the kernel has Landlock built in but not enabled (%w): add landlock to the lsm= "+
			"kernel command line (for example lsm=landlock,lockdown,yama,integrity,apparmor,bpf) and reboot", err)
	}
	return fmt.Errorf("probing Landlock: %w", err)
}

// checkSeccomp asks whether filter mode with SECCOMP_RET_ERRNO is available.
func (k Kernel) checkSeccomp() error {
	if err := k.SeccompMode(); err != nil {
		return fmt.Errorf("the kernel has no seccomp (%w): sandboxd needs CONFIG_SECCOMP_FILTER=y", err)
	}
	if err := k.SeccompErrnoAvail(); err != nil {
		if errors.Is(err, unix.EPERM) && k.InContainer() {
			return fmt.Errorf("seccomp(2) is blocked inside this container (%w): start it with security_opt "+
				"seccomp=%s", err, SeccompProfile)
		}
		return fmt.Errorf("seccomp filter mode is unavailable (%w): sandboxd needs CONFIG_SECCOMP_FILTER=y", err)
	}
	return nil
}

// inContainer guesses whether we run in a container, only to word errors.
func inContainer() bool {
	if _, err := os.Stat("/.dockerenv"); err == nil {
		return true
	}
	b, err := os.ReadFile("/proc/1/cgroup")
	if err != nil {
		return false
	}
	s := string(b)
	return strings.Contains(s, "docker") || strings.Contains(s, "containerd") || strings.Contains(s, "kubepods")
}
