// Package outbox takes the files a call left in $VESSEL_OUTBOX and keeps
// only those that are what they claim to be, within the file limits.
package outbox

import (
	"bytes"
	"encoding/csv"
	"encoding/xml"
	"errors"
	"fmt"
	"image/png"
	"io"
	"io/fs"
	"os"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"unicode/utf8"
)

// Limits on returned files (decimal megabytes, like the spec's body limit).
const (
	MaxFileBytes = 4_000_000
	MaxPerCall   = 4
	MaxPerTurn   = 8
	MaxTurnBytes = 16_000_000
)

// MediaTypes maps each supported extension to its media type.
var MediaTypes = map[string]string{
	"png": "image/png",
	"svg": "image/svg+xml",
	"csv": "text/csv",
	"pdf": "application/pdf",
}

var plainName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

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
	ok := map[string]bool{}
	for _, a := range allowed {
		ok[strings.ToLower(strings.TrimPrefix(a, "."))] = true
	}
	var files []File
	var refused []Refused
	for _, e := range entries {
		name := e.Name()
		f, reason := check(box, name, ok)
		if reason == "" && len(files) >= MaxPerCall {
			reason = fmt.Sprintf("a call may return at most %d files", MaxPerCall)
		}
		if reason == "" && !budget(int64(len(f.Content))) {
			reason = fmt.Sprintf("a turn may return at most %d files and %d bytes", MaxPerTurn, MaxTurnBytes)
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
func check(box *os.Root, name string, allowed map[string]bool) (File, string) {
	if !plainName.MatchString(name) {
		return File{}, "the name must be 1 to 128 of [A-Za-z0-9._-] and not start with a dot"
	}
	dot := strings.LastIndexByte(name, '.')
	if dot < 0 {
		return File{}, "the name has no extension"
	}
	ext := strings.ToLower(name[dot+1:])
	if !allowed[ext] || MediaTypes[ext] == "" {
		return File{}, fmt.Sprintf("files of type %q are not allowed for this agent", ext)
	}
	st, err := box.Lstat(name)
	if err != nil {
		return File{}, "it could not be read"
	}
	if !st.Mode().IsRegular() {
		return File{}, fmt.Sprintf("it is not a regular file (%s)", kind(st.Mode()))
	}
	if st.Size() > MaxFileBytes {
		return File{}, fmt.Sprintf("it is larger than %d bytes", MaxFileBytes)
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
	content, err := io.ReadAll(io.LimitReader(fh, MaxFileBytes+1))
	if err != nil {
		return File{}, "it could not be read"
	}
	if len(content) > MaxFileBytes {
		return File{}, fmt.Sprintf("it is larger than %d bytes", MaxFileBytes)
	}
	if why := Sniff(ext, content); why != "" {
		return File{}, why
	}
	return File{Name: name, MediaType: MediaTypes[ext], Content: content}, ""
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

// Sniff checks that content really is of type ext; it returns why not.
func Sniff(ext string, content []byte) string {
	switch ext {
	case "png":
		if _, err := png.DecodeConfig(bytes.NewReader(content)); err != nil {
			return "the content is not a PNG image"
		}
	case "pdf":
		if !bytes.HasPrefix(content, []byte("%PDF-")) {
			return "the content is not a PDF (no %PDF- header)"
		}
		tail := content[max(0, len(content)-1024):]
		if !bytes.Contains(tail, []byte("%%EOF")) {
			return "the content is not a complete PDF (no %%EOF trailer)"
		}
	case "svg":
		if why := sniffSVG(content); why != "" {
			return why
		}
	case "csv":
		if why := sniffCSV(content); why != "" {
			return why
		}
	default:
		return fmt.Sprintf("files of type %q are not supported", ext)
	}
	return ""
}

func sniffSVG(content []byte) string {
	if !utf8.Valid(content) {
		return "the content is not UTF-8 XML"
	}
	dec := xml.NewDecoder(bytes.NewReader(content))
	root := ""
	depth := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "the content is not well-formed XML"
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = t.Name.Local
			} else if depth == 0 {
				return "the XML has more than one root element"
			}
			depth++
		case xml.EndElement:
			depth--
		case xml.CharData:
			if depth == 0 && len(bytes.TrimSpace(t)) > 0 {
				return "the XML has text outside its root element"
			}
		}
	}
	if root != "svg" {
		return "the XML's root element is not <svg>"
	}
	return ""
}

func sniffCSV(content []byte) string {
	if !utf8.Valid(content) || bytes.IndexByte(content, 0) >= 0 {
		return "the content is not UTF-8 text"
	}
	r := csv.NewReader(bytes.NewReader(content))
	r.FieldsPerRecord = 0 // every row as wide as the first
	rows := 0
	for {
		_, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Sprintf("the content is not valid CSV: %v", err)
		}
		rows++
	}
	if rows == 0 {
		return "the CSV is empty"
	}
	return ""
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
