package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
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
	var stderr bytes.Buffer
	exit := s.confined(ctx, turn, call, k, []string{"true"}, nil, 30*time.Second, func(r *sandboxv1.RunResponse) error {
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
