// Package usage is the vessel's usage export: one Record per finished turn,
// appended as a JSON line to a rotated log (rotlog), and the summary
// `astralvessel usage` prints from those logs by app, user or agent over a
// time range (docs/operations.md).
package usage

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/astraldeep/astralvessel-go/runtime/rotlog"
)

// Record is one finished turn.
type Record struct {
	Time       time.Time `json:"time"` // when the turn finished (UTC)
	Task       string    `json:"task"`
	Context    string    `json:"context,omitempty"`
	Owner      string    `json:"owner"` // <app>/<user> or <issuer>|<subject>
	App        string    `json:"app"`   // the app or token issuer
	User       string    `json:"user"`  // the end user within the app
	Agent      string    `json:"agent"`
	Model      string    `json:"model"`
	Route      string    `json:"route,omitempty"` // the model route ([models]; "default" for [egress] upstream_url)
	Status     string    `json:"status"`
	TokensIn   int64     `json:"tokens_in"`
	TokensOut  int64     `json:"tokens_out"`
	Steps      int64     `json:"steps"`
	ToolCalls  int64     `json:"tool_calls"`
	Files      int64     `json:"files"`
	DurationMS int64     `json:"duration_ms"`
}

// SplitOwner is the app (or issuer) and user of an owner string
// ("<app>/<user>", "<issuer>|<subject>"); an owner with neither separator
// is all app.
func SplitOwner(owner string) (app, user string) {
	if i := strings.IndexAny(owner, "/|"); i >= 0 {
		return owner[:i], owner[i+1:]
	}
	return owner, ""
}

// Recorder appends Records to a usage log; a nil Recorder records nothing.
type Recorder struct {
	w *rotlog.Writer
}

// Open opens the usage log at path (see rotlog.Open).
func Open(path string, o rotlog.Options) (*Recorder, error) {
	w, err := rotlog.Open(path, o)
	if err != nil {
		return nil, fmt.Errorf("usage log: %w", err)
	}
	return &Recorder{w: w}, nil
}

// Record appends r.
func (rc *Recorder) Record(r *Record) error {
	if rc == nil {
		return nil
	}
	if err := rc.w.Append(r); err != nil {
		return fmt.Errorf("usage log: %w", err)
	}
	return nil
}

// Close closes the log; a nil Recorder is fine.
func (rc *Recorder) Close() error {
	if rc == nil {
		return nil
	}
	return rc.w.Close()
}

// Group names what a summary adds up by.
type Group string

// The groups of a summary.
const (
	ByApp   Group = "app"
	ByUser  Group = "user" // by owner: a user id means something only within its app
	ByAgent Group = "agent"
	// ByRoute sums by model route; records written before routes count
	// as "default", the route they took.
	ByRoute Group = "route"
)

// ParseGroup reads --by.
func ParseGroup(s string) (Group, error) {
	switch g := Group(s); g {
	case ByApp, ByUser, ByAgent, ByRoute:
		return g, nil
	}
	return "", fmt.Errorf("group %q: want app, user, agent or route", s)
}

func (g Group) key(r *Record) string {
	switch g {
	case ByApp:
		return r.App
	case ByUser:
		return r.Owner
	case ByRoute:
		if r.Route == "" {
			return "default"
		}
		return r.Route
	}
	return r.Agent
}

// Row is one group's totals.
type Row struct {
	Key        string           `json:"key"`
	Turns      int64            `json:"turns"`
	Statuses   map[string]int64 `json:"statuses"`
	TokensIn   int64            `json:"tokens_in"`
	TokensOut  int64            `json:"tokens_out"`
	Steps      int64            `json:"steps"`
	ToolCalls  int64            `json:"tool_calls"`
	Files      int64            `json:"files"`
	DurationMS int64            `json:"duration_ms"`
}

// Bad is a line that could not be read as a Record.
type Bad struct {
	File string
	Line int
	Err  error
}

func (b Bad) String() string { return fmt.Sprintf("%s:%d: %v", b.File, b.Line, b.Err) }

// Summary is the result of Summarise.
type Summary struct {
	Rows []Row // sorted by key
	// Records is how many records fell in the range.
	Records int64
	// Bad lists the malformed lines (at most MaxBad; BadCount counts all).
	Bad      []Bad
	BadCount int64
}

// MaxBad bounds the malformed lines a Summary names one by one.
const MaxBad = 20

// maxLine bounds one record line.
const maxLine = 1 << 20

// Summariser adds records up.
type Summariser struct {
	From, To time.Time // records with From <= Time < To count; zero means open
	By       Group
	rows     map[string]*Row
	s        Summary
}

// Add reads one log's lines; a malformed line is noted and skipped. Only a
// failure to read r is an error.
func (su *Summariser) Add(name string, r io.Reader) error {
	if su.rows == nil {
		su.rows = map[string]*Row{}
	}
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 1; ; n++ {
		line, err := readLine(br)
		switch {
		case errors.Is(err, errLong):
			su.bad(name, n, errLong)
		case len(line) > 0:
			su.line(name, n, line)
		}
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case err != nil && !errors.Is(err, errLong):
			return fmt.Errorf("usage: read %s: %w", name, err)
		}
	}
}

var errLong = fmt.Errorf("line over %d bytes", maxLine)

// readLine reads one line without its newline; a line over maxLine is
// skipped whole and reported as errLong.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	long := false
	for {
		part, err := br.ReadSlice('\n')
		if !long {
			if len(line)+len(part) > maxLine {
				long, line = true, nil
			} else {
				line = append(line, part...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if long && err == nil {
			return nil, errLong
		}
		if long {
			return nil, errors.Join(errLong, err)
		}
		return line, err
	}
}

func (su *Summariser) bad(name string, n int, err error) {
	su.s.BadCount++
	if len(su.s.Bad) < MaxBad {
		su.s.Bad = append(su.s.Bad, Bad{File: name, Line: n, Err: err})
	}
}

func (su *Summariser) line(name string, n int, line []byte) {
	line = []byte(strings.TrimSpace(string(line)))
	if len(line) == 0 {
		return
	}
	var r Record
	dec := json.NewDecoder(strings.NewReader(string(line)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		su.bad(name, n, fmt.Errorf("not a usage record: %w", err))
		return
	}
	if r.Time.IsZero() || r.Agent == "" || r.Status == "" {
		su.bad(name, n, errors.New("not a usage record: time, agent or status missing"))
		return
	}
	if r.TokensIn < 0 || r.TokensOut < 0 || r.Steps < 0 || r.ToolCalls < 0 || r.Files < 0 || r.DurationMS < 0 {
		su.bad(name, n, errors.New("not a usage record: a negative count"))
		return
	}
	if (!su.From.IsZero() && r.Time.Before(su.From)) || (!su.To.IsZero() && !r.Time.Before(su.To)) {
		return
	}
	k := su.By.key(&r)
	row := su.rows[k]
	if row == nil {
		row = &Row{Key: k, Statuses: map[string]int64{}}
		su.rows[k] = row
	}
	su.s.Records++
	row.Turns++
	row.Statuses[r.Status]++
	row.TokensIn += r.TokensIn
	row.TokensOut += r.TokensOut
	row.Steps += r.Steps
	row.ToolCalls += r.ToolCalls
	row.Files += r.Files
	row.DurationMS += r.DurationMS
}

// Summary is the totals so far, rows sorted by key.
func (su *Summariser) Summary() Summary {
	out := su.s
	out.Rows = make([]Row, 0, len(su.rows))
	for _, r := range su.rows {
		out.Rows = append(out.Rows, *r)
	}
	sort.Slice(out.Rows, func(i, j int) bool { return out.Rows[i].Key < out.Rows[j].Key })
	return out
}

// SummariseFiles adds up the logs at paths, each with its rotated files
// (rotlog.Files).
func SummariseFiles(paths []string, from, to time.Time, by Group) (Summary, error) {
	su := &Summariser{From: from, To: to, By: by}
	for _, p := range paths {
		files, err := rotlog.Files(p)
		if err != nil {
			return Summary{}, err
		}
		if len(files) == 0 {
			return Summary{}, fmt.Errorf("usage: no log at %s", p)
		}
		for _, f := range files {
			fh, err := os.Open(f)
			if err != nil {
				return Summary{}, fmt.Errorf("usage: %w", err)
			}
			err = su.Add(f, fh)
			fh.Close()
			if err != nil {
				return Summary{}, err
			}
		}
	}
	return su.Summary(), nil
}
