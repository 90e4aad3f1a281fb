package tools

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// Builtin names.
const (
	Read = "read"
	Glob = "glob"
	List = "list"
	Grep = "grep"
	Bash = "bash"
)

// MaxListed caps glob and list results; MaxVisited caps how many entries
// one glob walks.
const (
	MaxListed  = 2000
	MaxVisited = 200_000
)

// ArgError is a tool-level error reported to the model.
type ArgError struct{ Msg string }

func (e *ArgError) Error() string { return e.Msg }

func argErr(format string, a ...any) error { return &ArgError{Msg: fmt.Sprintf(format, a...)} }

// ReadArgs are read's arguments.
type ReadArgs struct {
	Path   string `json:"path"`
	Offset int    `json:"offset"` // first line, 1-based
	Limit  int    `json:"limit"`  // number of lines
}

// GlobArgs are glob's arguments.
type GlobArgs struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path"`
}

// ListArgs are list's arguments.
type ListArgs struct {
	Path string `json:"path"`
}

// GrepArgs are grep's arguments.
type GrepArgs struct {
	Pattern    string `json:"pattern"`
	Path       string `json:"path"`
	Include    string `json:"include"`
	IgnoreCase bool   `json:"ignore_case"`
}

// BashArgs are bash's arguments.
type BashArgs struct {
	Command string `json:"command"`
}

// Decode parses a tool's JSON arguments strictly.
func Decode(argsJSON string, v any) error {
	if strings.TrimSpace(argsJSON) == "" {
		argsJSON = "{}"
	}
	dec := json.NewDecoder(strings.NewReader(argsJSON))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return argErr("bad arguments: %v", err)
	}
	return nil
}

// RunRead writes the file's content (or the selected lines) to w, at most
// limit bytes; it reports whether it cut the output.
func (r Roots) RunRead(a ReadArgs, workspace string, w io.Writer, limit int64) (bool, error) {
	if a.Path == "" {
		return false, argErr("read needs a path")
	}
	dir, rel, err := r.Resolve(a.Path, workspace)
	if err != nil {
		return false, err
	}
	root, err := openRoot(dir)
	if err != nil {
		return false, err
	}
	defer root.Close()
	// O_NONBLOCK: a FIFO in a data mount must not hang the server.
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false, pathErr(a.Path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return false, pathErr(a.Path, err)
	}
	if !st.Mode().IsRegular() {
		return false, argErr("%s is not a regular file", a.Path)
	}
	var src io.Reader = f
	if a.Offset > 1 || a.Limit > 0 {
		pr := selectLines(f, max(a.Offset, 1), a.Limit)
		defer pr.Close()
		src = pr
	}
	if _, err := io.Copy(w, io.LimitReader(src, limit)); err != nil {
		return false, pathErr(a.Path, err)
	}
	// One more byte tells whether the output was cut.
	n, _ := src.Read(make([]byte, 1))
	return n > 0, nil
}

// selectLines returns the lines [offset, offset+limit) of f; closing the
// reader stops the copying goroutine. Lines are passed on in pieces of
// the reader's buffer, never held whole: a single 45 MB line costs 4 KiB.
func selectLines(f io.Reader, offset, limit int) *io.PipeReader {
	pr, pw := io.Pipe()
	go func() {
		br := bufio.NewReader(f)
		line := 1
		for {
			b, err := br.ReadSlice('\n')
			if len(b) > 0 && line >= offset && (limit <= 0 || line < offset+limit) {
				if _, werr := pw.Write(b); werr != nil {
					return
				}
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				continue // the same line goes on
			}
			line++
			if err != nil || (limit > 0 && line >= offset+limit) {
				pw.Close()
				return
			}
		}
	}()
	return pr
}

// RunList writes the entries of a directory, one per line: directories end
// in "/", symlinks in "@", files show their size.
func (r Roots) RunList(a ListArgs, workspace string, w io.Writer) error {
	dir, rel, err := r.Resolve(a.Path, workspace)
	if err != nil {
		return err
	}
	root, err := openRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	entries, err := fs.ReadDir(root.FS(), rel)
	if err != nil {
		return pathErr(a.Path, err)
	}
	var b bytes.Buffer
	for i, e := range entries {
		if i >= MaxListed {
			fmt.Fprintf(&b, "[%d more entries not shown]\n", len(entries)-MaxListed)
			break
		}
		switch {
		case e.IsDir():
			fmt.Fprintf(&b, "%s/\n", e.Name())
		case e.Type()&fs.ModeSymlink != 0:
			fmt.Fprintf(&b, "%s@\n", e.Name())
		default:
			size := int64(0)
			if info, err := e.Info(); err == nil {
				size = info.Size()
			}
			fmt.Fprintf(&b, "%s\t%d\n", e.Name(), size)
		}
	}
	_, err = w.Write(b.Bytes())
	return err
}

// RunGlob writes the paths (absolute, as a call sees them) under a.Path
// that match a.Pattern, where "**" matches any number of directories.
// Symlinks are listed but never followed.
func (r Roots) RunGlob(a GlobArgs, workspace string, w io.Writer) error {
	if a.Pattern == "" {
		return argErr("glob needs a pattern")
	}
	if strings.HasPrefix(a.Pattern, "/") || strings.Contains("/"+a.Pattern+"/", "/../") {
		return argErr("the pattern must be relative and may not contain ..; put the directory in path")
	}
	if _, err := path.Match(strings.ReplaceAll(a.Pattern, "**", "*"), ""); err != nil {
		return argErr("bad pattern: %v", err)
	}
	dir, rel, err := r.Resolve(a.Path, workspace)
	if err != nil {
		return err
	}
	root, err := openRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	pat := strings.Split(a.Pattern, "/")
	var out []string
	more, visited := 0, 0
	errStop := errors.New("stop")
	err = fs.WalkDir(root.FS(), rel, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable: skip
		}
		if visited++; visited > MaxVisited {
			return errStop
		}
		if p == rel {
			return nil
		}
		sub := strings.TrimPrefix(p, rel+"/")
		if rel == "." {
			sub = p
		}
		if matchSegments(pat, strings.Split(sub, "/")) {
			if len(out) < MaxListed {
				out = append(out, filepath.Join(dir, p))
			} else {
				more++
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return pathErr(a.Path, err)
	}
	sort.Strings(out)
	var b bytes.Buffer
	for _, p := range out {
		b.WriteString(p)
		b.WriteByte('\n')
	}
	if more > 0 {
		fmt.Fprintf(&b, "[%d more matches not shown]\n", more)
	}
	if visited > MaxVisited {
		fmt.Fprintf(&b, "[stopped after %d entries; narrow the path]\n", MaxVisited)
	}
	_, err = w.Write(b.Bytes())
	return err
}

// matchSegments matches path segments against pattern segments, "**"
// standing for zero or more segments.
func matchSegments(pat, segs []string) bool {
	if len(pat) == 0 {
		return len(segs) == 0
	}
	if pat[0] == "**" {
		for i := 0; i <= len(segs); i++ {
			if matchSegments(pat[1:], segs[i:]) {
				return true
			}
		}
		return false
	}
	if len(segs) == 0 {
		return false
	}
	ok, err := path.Match(pat[0], segs[0])
	if err != nil || !ok {
		return false
	}
	return matchSegments(pat[1:], segs[1:])
}

// pathErr words a filesystem error without leaking server-side details.
func pathErr(p string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return argErr("%s does not exist", p)
	case errors.Is(err, fs.ErrPermission):
		return argErr("%s: permission denied", p)
	case strings.Contains(err.Error(), "escapes from parent") || strings.Contains(err.Error(), "path escapes"):
		return fmt.Errorf("%s: %w", p, ErrOutside)
	}
	return argErr("%s: %v", p, unwrapPath(err))
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
