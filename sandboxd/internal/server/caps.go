package server

import (
	"errors"
	"fmt"
	"os"

	"github.com/astraldeep/astralvessel-go/sandboxd/internal/confine"
	"github.com/astraldeep/astralvessel-go/sandboxd/internal/workspace"
	"golang.org/x/sys/unix"
)

// capReached turns a start refused by the turn's cgroup (its pids.max or
// its owner's is reached) into a sentence for the caller: their own cap,
// which nobody else shares.
func (s *Server) capReached(err error) (string, bool) {
	var se *confine.StepError
	if !errors.As(err, &se) || se.Step != confine.StepCgroup || !errors.Is(se.Errno, unix.EAGAIN) {
		return "", false
	}
	return capMessage(s.cfg.Workspaces, "owner"), true
}

// procCapMessage is the refusal of a call whose turn or owner already
// holds as many processes as its cap allows ("" when neither does).
func procCapMessage(m *workspace.Manager, t *workspace.Turn) string {
	who := m.AtProcCap(t)
	if who == "" {
		return ""
	}
	return capMessage(m, who)
}

func capMessage(m *workspace.Manager, who string) string {
	turn, owner, _ := m.Caps()
	if who == "turn" {
		return fmt.Sprintf("could not start the call: this turn's process cap (%d) is reached; "+
			"end processes it left running, then try again", turn.Procs)
	}
	return fmt.Sprintf("could not start the call: your process cap across your turns (%d) is reached; "+
		"end processes you left running or end a turn, then try again", owner.Procs)
}

func closeAll(fs []*os.File) {
	for _, f := range fs {
		f.Close()
	}
}
