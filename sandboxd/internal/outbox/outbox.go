// Package outbox takes the files a call left in $VESSEL_OUTBOX and keeps
// only those that are what they claim to be, within the file limits.
package outbox

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"syscall"

	"github.com/astraldeep/astralvessel-go/runtime/outputfiles"
)

// plainName is the shared name rule, under the name this package's fuzz
// test checks it by.
var plainName = outputfiles.NamePattern

// Sniff checks that content really is of type ext; it returns why not.
// The rules are outputfiles', which the vessel applies again.
func Sniff(ext string, content []byte) string { return outputfiles.Sniff(ext, content) }

// File is an accepted file.
type File struct {
	Name      string
	MediaType string
	Content   []byte
}

// Refused is an entry that was not kept.
type Refused struct {
	Name   string
	Reason string
}

// Budget counts files against the turn's limits; it returns false when
// one more file of n bytes would exceed them.
type Budget func(n int64) bool

// Collect reads every entry of the outbox directory dir (opened beneath
// the workspace root ws, so a call cannot point it elsewhere), decides on
// each, and removes them all. allowed lists the agent's file extensions.
func Collect(ws *os.Root, dir string, allowed []string, budget Budget) ([]File, []Refused, error) {
	// Most calls leave nothing: removing an empty directory is one rmdir.
	if err := ws.Remove(dir); err == nil || errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	defer func() { _ = ws.RemoveAll(dir) }()
	st, err := ws.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("outbox: %w", err)
	}
	if !st.IsDir() {
		return nil, []Refused{{Name: dir, Reason: "the outbox was replaced by something that is not a directory"}}, nil
	}
	box, err := ws.OpenRoot(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("opening outbox: %w", err)
	}
	defer box.Close()
	d, err := box.Open(".")
	if err != nil {
		return nil, nil, fmt.Errorf("opening outbox: %w", err)
	}
	entries, err := d.ReadDir(-1)
	d.Close()
	if err != nil {
		return nil, nil, fmt.Errorf("listing outbox: %w", err)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	ok := outputfiles.AllowedTypes(allowed)
	var files []File
	var refused []Refused
	for _, e := range entries {
		name := e.Name()
		f, reason := check(box, name, ok)
		if reason == "" && len(files) >= outputfiles.MaxPerCall {
			reason = outputfiles.PerCallReason
		}
		if reason == "" && !budget(int64(len(f.Content))) {
			reason = outputfiles.PerTurnReason
		}
		if reason != "" {
			refused = append(refused, Refused{Name: name, Reason: reason})
			continue
		}
		files = append(files, f)
	}
	return files, refused, nil
}

// check decides on one entry; a non-empty reason refuses it.
func check(box *os.Root, name string, allowed outputfiles.Allowed) (File, string) {
	ext, why := outputfiles.CheckName(name, allowed)
	if why != "" {
		return File{}, why
	}
	st, err := box.Lstat(name)
	if err != nil {
		return File{}, "it could not be read"
	}
	if !st.Mode().IsRegular() {
		return File{}, fmt.Sprintf("it is not a regular file (%s)", kind(st.Mode()))
	}
	if why := outputfiles.CheckSize(st.Size()); why != "" {
		return File{}, why
	}
	// O_NOFOLLOW and O_NONBLOCK: a swap to a symlink or FIFO after the
	// Lstat fails here instead of following or hanging.
	fh, err := box.OpenFile(name, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return File{}, "it could not be opened"
	}
	defer fh.Close()
	fst, err := fh.Stat()
	if err != nil || !fst.Mode().IsRegular() {
		return File{}, "it is not a regular file"
	}
	content, err := io.ReadAll(io.LimitReader(fh, outputfiles.MaxFileBytes+1))
	if err != nil {
		return File{}, "it could not be read"
	}
	if why := outputfiles.CheckContent(ext, content); why != "" {
		return File{}, why
	}
	return File{Name: name, MediaType: outputfiles.MediaType(ext), Content: content}, ""
}

func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "symlink"
	case m.IsDir():
		return "directory"
	case m&fs.ModeNamedPipe != 0:
		return "FIFO"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "special file"
}

// Empty reports whether the outbox dir (beneath the workspace root ws)
// has nothing to collect: it is gone or an empty directory. Collect would
// then return nothing; Remove deletes it.
func Empty(ws *os.Root, dir string) bool {
	d, err := ws.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	if err != nil {
		return false
	}
	defer d.Close()
	names, err := d.Readdirnames(1)
	return len(names) == 0 && errors.Is(err, io.EOF)
}

// Remove deletes the outbox dir and anything a late writer put there.
func Remove(ws *os.Root, dir string) {
	if err := ws.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		_ = ws.RemoveAll(dir)
	}
}
