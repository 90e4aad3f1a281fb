package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	sandboxv1 "github.com/astraldeep/astralvessel-go/proto/astralvessel/sandbox/v1"
	"github.com/astraldeep/astralvessel-go/sandboxd/internal/confine"
	"golang.org/x/sys/unix"
)

// SelfTest runs one confined `true` the way every call runs, so a sandbox
// that cannot confine (a seccomp profile, missing no_new_privs support, an
// unreadable launcher) fails at start instead of on the first real call.
func (s *Server) SelfTest(ctx context.Context) error {
	id := "selftest-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	turn, err := s.cfg.Workspaces.Acquire(id, "sandboxd")
	if err != nil {
		return err
	}
	defer func() { _, _ = s.cfg.Workspaces.End(id) }()
	k := &killer{cancel: func(error) {}}
	call, err := turn.Begin(k.kill)
	if err != nil {
		return err
	}
	defer turn.Done(call)
	run := func(argv ...string) error {
		var stderr bytes.Buffer
		exit, after := s.confined(ctx, turn, call, k, argv, nil, 30*time.Second, func(r *sandboxv1.RunResponse) error {
			stderr.Write(r.GetStderr())
			return nil
		})
		if after != nil {
			after()
		}
		k.mu.Lock()
		startErr := k.startErr
		k.mu.Unlock()
		if err := confinementFailure(startErr); err != nil {
			return err
		}
		if exit.GetError() != "" {
			return errors.New(exit.GetError())
		}
		if exit.GetSignal() != "" || exit.GetStopped() != "" {
			// Not a permission problem: something ended the test call.
			return &killedError{signal: exit.GetSignal(), stopped: exit.GetStopped(), uid: turn.UID}
		}
		if exit.GetCode() != 0 {
			return fmt.Errorf("exit code %d: %s", exit.GetCode(), bytes.TrimSpace(stderr.Bytes()))
		}
		return nil
	}
	unreadable := func(d string) error {
		who := "sandboxd's user"
		if turn.UID >= 0 {
			who = fmt.Sprintf("uids of their own (here %d)", turn.UID)
		}
		return fmt.Errorf("calls run as %s and cannot read %s: make it and every directory above it "+
			"readable and searchable by every user (for example chmod o+rx)", who, d)
	}
	if err := run("true"); err != nil {
		// The launcher opens every granted tree as the call user.
		for _, d := range s.ro {
			if strings.Contains(err.Error(), d+": Permission denied") {
				return unreadable(d)
			}
		}
		return err
	}
	// The call user must be able to read the package and the data, or
	// every tool that needs them fails later for a reason hard to see.
	for _, d := range s.roots.Dirs {
		if err := run("test", "-r", d, "-a", "-x", d); err != nil {
			var killed *killedError
			if errors.As(err, &killed) {
				return err
			}
			return unreadable(d)
		}
	}
	return nil
}

// confinementFailure explains a launcher step that could not confine the
// test call (what is missing and how to fix it), or returns nil when err
// is not such a step. The kernel check at start passed by then, so these
// are mostly policies around sandboxd, such as a container's seccomp
// profile.
func confinementFailure(err error) error {
	var step *confine.StepError
	if !errors.As(err, &step) {
		return nil
	}
	profile := fmt.Sprintf("start the container with our profile (security_opt: seccomp=%s, as "+
		"`astralvessel deploy` generates) or upgrade Docker to 23.0 or newer", confine.SeccompProfile)
	switch step.Step {
	case confine.StepSeccomp:
		switch step.Errno {
		case unix.EPERM, unix.EACCES, unix.ENOSYS:
			return fmt.Errorf("calls cannot be confined: %w: a seccomp profile around sandboxd blocks "+
				"seccomp(2) (Docker engines before 23.0 may); %s", err, profile)
		case unix.ENOMEM:
			return fmt.Errorf("calls cannot be confined: %w: the seccomp filters already around sandboxd "+
				"leave no room for the call filter; run it under a shorter profile such as %s", err, confine.SeccompProfile)
		}
		return fmt.Errorf("calls cannot be confined: %w: the kernel refused the call's seccomp filter; "+
			"sandboxd needs seccomp filter mode (CONFIG_SECCOMP_FILTER=y) and a libseccomp for this "+
			"architecture", err)
	case confine.StepLandlock:
		switch step.Errno {
		case unix.EPERM, unix.ENOSYS:
			return fmt.Errorf("calls cannot be confined: %w: a seccomp profile around sandboxd blocks "+
				"landlock_restrict_self (Docker engines before 23.0 do so by default); %s", err, profile)
		case unix.E2BIG:
			return fmt.Errorf("calls cannot be confined: %w: sandboxd already runs inside the most nested "+
				"Landlock domains the kernel allows (16); start it with fewer Landlock layers around it", err)
		}
		return fmt.Errorf("calls cannot be confined: %w: sandboxd needs Landlock ABI %d or newer "+
			"(Linux 6.12+) with landlock in the lsm= boot parameter", err, confine.MinLandlockABI)
	case confine.StepNoNewPrivs:
		return fmt.Errorf("calls cannot be confined: %w: no_new_privs is required for seccomp and "+
			"Landlock without privileges; remove the policy that blocks prctl(PR_SET_NO_NEW_PRIVS)", err)
	}
	return nil
}

// killedError is a self-test call ended by a signal or a stop, which says
// nothing of permissions: reported as such, with the likely cause.
type killedError struct {
	signal, stopped string
	uid             int
}

func (e *killedError) Error() string {
	how := "was killed by " + e.signal
	if e.stopped != "" {
		how = "was stopped (" + e.stopped + ")"
	}
	if e.signal == "SIGKILL" && e.stopped == "" && e.uid >= 0 {
		return fmt.Sprintf("the confined test call (uid %d) %s, which sandboxd did not send: another process "+
			"sharing this uid killed it (another sandboxd whose --uid-range overlaps, sweeping its turns?)", e.uid, how)
	}
	return "the confined test call " + how
}
