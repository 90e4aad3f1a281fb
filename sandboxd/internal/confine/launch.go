package confine

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

/*
#cgo CFLAGS: -O2 -Wall
*/
import "C"

// LaunchArg is the argument that turns sandboxd into the launcher. The
// launcher itself is C (launcher.c), run as a constructor before the Go
// runtime starts; see there for the order of steps.
const LaunchArg = "__launch"

// Spec is everything the launcher needs to confine and exec one call.
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
	Limits  Limits
	// Filter is the seccomp BPF program from BuildFilter.
	Filter []byte
}

// Limits are the call's resource limits; zero leaves one unset.
type Limits struct {
	NoFile   uint64
	FileSize uint64
	NProc    uint64
	CPUSecs  uint64
}

// IsLauncher tells main whether this process was started as the launcher.
func IsLauncher(args []string) bool {
	return len(args) > 1 && args[1] == LaunchArg
}

// Launch is reached only if the C launcher did not take over, which means
// the binary was built without it; it never confines anything.
func Launch() error {
	return errors.New("the launcher constructor did not run (built without cgo?); refusing to run unconfined")
}

// encode writes the spec in the launcher's binary format.
func (s *Spec) encode() ([]byte, error) {
	if s.Path == "" || len(s.Argv) == 0 || len(s.Filter) == 0 {
		return nil, errors.New("spec needs a path, argv and a filter")
	}
	var b bytes.Buffer
	b.WriteString("SBXL1\x00")
	for _, v := range []uint64{s.Limits.NoFile, s.Limits.FileSize, s.Limits.NProc, s.Limits.CPUSecs} {
		_ = binary.Write(&b, binary.LittleEndian, v)
	}
	for _, list := range [][]string{{s.Path}, s.Argv, s.Env, s.ReadOnly, s.ReadWrite, s.Devices} {
		_ = binary.Write(&b, binary.LittleEndian, uint32(len(list)))
		for _, str := range list {
			if strings.IndexByte(str, 0) >= 0 {
				return nil, fmt.Errorf("spec string %q contains a NUL byte", str)
			}
			b.WriteString(str)
			b.WriteByte(0)
		}
	}
	_ = binary.Write(&b, binary.LittleEndian, uint32(len(s.Filter)))
	b.Write(s.Filter)
	return b.Bytes(), nil
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
