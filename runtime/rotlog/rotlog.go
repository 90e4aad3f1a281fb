// Package rotlog is the append-only JSON-lines file the vessel, sandboxd
// and the egress write their usage and audit records to: one JSON value a
// line, appended, the file rotated by size (gopkg.in/natefinch/lumberjack.v2)
// with a bounded number of rotated files kept beside it.
package rotlog

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"gopkg.in/natefinch/lumberjack.v2"
)

// Defaults for Options.
const (
	DefaultMaxMB   = 100
	DefaultBackups = 10
)

// Options size a log. Zero values take the defaults.
type Options struct {
	// MaxMB is the size in megabytes at which the file is rotated.
	MaxMB int
	// Backups is how many rotated files are kept (older ones are removed).
	Backups int
}

// FileMode is the mode of every record file: owner read-write, group read.
const FileMode = 0o640

// Writer appends JSON lines to a file, rotating it by size. It is safe for
// concurrent use; each Append is one whole line.
type Writer struct {
	mu  sync.Mutex
	lj  *lumberjack.Logger
	buf []byte
}

// Open prepares the log at path (its directory must exist; the file is
// made with mode 0640: the owner writes, the folder's group reads, so an
// operator group on a setgid folder reads the records without root,
// docs/operations.md; lumberjack gives rotated files the same mode). Opening
// checks the directory at once so a wrong path stops the process at start,
// not at its first record.
func Open(path string, o Options) (*Writer, error) {
	if strings.TrimSpace(path) == "" {
		return nil, errors.New("rotlog: empty path")
	}
	if o.MaxMB < 0 || o.Backups < 0 {
		return nil, fmt.Errorf("rotlog %s: size and backups must not be negative", path)
	}
	if o.MaxMB == 0 {
		o.MaxMB = DefaultMaxMB
	}
	if o.Backups == 0 {
		o.Backups = DefaultBackups
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, FileMode)
	if err != nil {
		return nil, fmt.Errorf("rotlog: %w", err)
	}
	// Whatever the umask or an older file's mode, the group reads.
	if err := f.Chmod(FileMode); err != nil {
		f.Close()
		return nil, fmt.Errorf("rotlog: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("rotlog: %w", err)
	}
	return &Writer{lj: &lumberjack.Logger{Filename: path, MaxSize: o.MaxMB, MaxBackups: o.Backups}}, nil
}

// Append writes v as one JSON line.
func (w *Writer) Append(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("rotlog: encode: %w", err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(append(w.buf[:0], b...), '\n')
	if _, err := w.lj.Write(w.buf); err != nil {
		return fmt.Errorf("rotlog: append to %s: %w", w.lj.Filename, err)
	}
	return nil
}

// Close closes the file; a nil Writer is fine.
func (w *Writer) Close() error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.lj.Close(); err != nil {
		return fmt.Errorf("rotlog: close: %w", err)
	}
	return nil
}

// backupTimeFormat is how lumberjack stamps a rotated file's name.
const backupTimeFormat = "2006-01-02T15-04-05.000"

// Files lists the log at path and its rotated files, oldest first (the
// rotated files are named <name>-<UTC time>.<ext>, which sorts by time;
// the live file is last). A missing live file is left out.
func Files(path string) ([]string, error) {
	dir, base := filepath.Split(path)
	ext := filepath.Ext(base)
	prefix := strings.TrimSuffix(base, ext) + "-"
	if dir == "" {
		dir = "."
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("rotlog: list %s: %w", dir, err)
	}
	var out []string
	for _, e := range entries {
		n := e.Name()
		if !e.Type().IsRegular() || !strings.HasPrefix(n, prefix) || !strings.HasSuffix(n, ext) || len(n) <= len(prefix)+len(ext) {
			continue
		}
		if _, err := time.Parse(backupTimeFormat, n[len(prefix):len(n)-len(ext)]); err == nil {
			out = append(out, filepath.Join(dir, n))
		}
	}
	sort.Strings(out)
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
		out = append(out, path)
	}
	return out, nil
}

// OptionsFromEnv reads VESSEL_RECORD_LOG_MAX_MB and
// VESSEL_RECORD_LOG_BACKUPS (unset: the defaults); a value that is not a
// positive number is an error naming the variable.
func OptionsFromEnv(getenv func(string) string) (Options, error) {
	var o Options
	for _, v := range []struct {
		name string
		dst  *int
	}{{"VESSEL_RECORD_LOG_MAX_MB", &o.MaxMB}, {"VESSEL_RECORD_LOG_BACKUPS", &o.Backups}} {
		s := strings.TrimSpace(getenv(v.name))
		if s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			return Options{}, fmt.Errorf("%s=%q: want a positive number", v.name, s)
		}
		*v.dst = n
	}
	return o, nil
}
