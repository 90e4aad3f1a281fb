package confine

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Spec is everything needed to confine and exec one call.
type Spec struct {
	// Path is the program, already looked up on the call's PATH.
	Path string
	Argv []string
	Env  []string
	// ReadOnly are trees the call may read and execute.
	ReadOnly []string
	// ReadWrite is the turn's workspace: the only tree it may change
	// (but not make sockets, FIFOs or devices in).
	ReadWrite []string
	// Devices are device files it may read and write (/dev/null).
	Devices []string
	// Grants, when set, holds ReadOnly and Devices opened beforehand
	// (OpenGrants of the same paths); rulesets use it instead of them.
	Grants *Grants
	// NoLandlock leaves Landlock out: the gvisor tier, whose kernel has
	// none and whose boundary is gVisor itself. Seccomp, the rlimits and
	// the call's uid still apply.
	NoLandlock bool
	Limits     Limits
	// Filter is the seccomp BPF program from BuildFilter.
	Filter []byte
}

// Limits are the call's resource limits; zero leaves one unset.
type Limits struct {
	NoFile   uint64
	FileSize uint64
	NProc    uint64
	CPUSecs  uint64
	// AddressSpace is RLIMIT_AS of each process of the call: the agent's
	// memory where no cgroup is given per call (docs/sandbox.md).
	AddressSpace uint64
}

// LookPath finds name on the call's own PATH (from env), not sandboxd's.
func LookPath(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	path := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: command not found", name)
}
