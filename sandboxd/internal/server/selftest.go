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
		exit := s.confined(ctx, turn, call, k, argv, nil, 30*time.Second, func(r *sandboxv1.RunResponse) error {
			stderr.Write(r.GetStderr())
			return nil
		})
		if exit.GetError() != "" {
			return errors.New(exit.GetError())
		}
		if exit.GetCode() != 0 {
			return fmt.Errorf("exit code %d %s: %s", exit.GetCode(), exit.GetSignal(), bytes.TrimSpace(stderr.Bytes()))
		}
		return nil
	}
	unreadable := func(d string) error {
		who := "sandboxd's user"
		if s.cfg.RunAs != nil {
			who = fmt.Sprintf("uid %d", s.cfg.RunAs.Uid)
		}
		return fmt.Errorf("calls run as %s and cannot read %s: make it and every directory above it "+
			"readable and searchable by that user (for example chmod o+rx), or choose --run-as", who, d)
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
			return unreadable(d)
		}
	}
	return nil
}
