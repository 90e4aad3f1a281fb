package modelproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"regexp"
	"sync"

	"github.com/astraldeep/astralvessel-go/runtime/sse"
)

// maxUsageLine bounds one SSE line (its end not counted) kept to look for
// a usage report; a longer line (a big content chunk) is passed through
// and not parsed.
const maxUsageLine = 64 << 10

// maxUsageBody bounds a whole JSON answer (a server that ignored
// stream:true) kept to read its usage.
const maxUsageBody = 1 << 20

// MaxAgentLabels bounds the distinct agent label values the token series
// takes; past it an agent counts as "other".
const MaxAgentLabels = 64

// agentPattern is the deployment's agent id syntax (deployer/spec).
var agentPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)

// agentLabels hands out bounded agent label values.
type agentLabels struct {
	mu   sync.Mutex
	seen map[string]bool
}

// label is the label for the agent a caller named: "unknown" when none,
// "invalid" when not an agent id, "other" once MaxAgentLabels are taken.
func (a *agentLabels) label(agent string) string {
	switch {
	case agent == "":
		return "unknown"
	case !agentPattern.MatchString(agent):
		return "invalid"
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.seen == nil {
		a.seen = map[string]bool{}
	}
	if !a.seen[agent] {
		if len(a.seen) >= MaxAgentLabels {
			return "other"
		}
		a.seen[agent] = true
	}
	return agent
}

type agentKey struct{}

func withAgent(ctx context.Context, label string) context.Context {
	return context.WithValue(ctx, agentKey{}, label)
}

func agentFrom(ctx context.Context) string {
	if s, ok := ctx.Value(agentKey{}).(string); ok {
		return s
	}
	return "unknown"
}

// wireUsage is the usage member of an OpenAI-compatible answer or chunk.
type wireUsage struct {
	Usage *struct {
		Prompt     int64 `json:"prompt_tokens"`
		Completion int64 `json:"completion_tokens"`
	} `json:"usage"`
}

// usageReader passes the upstream's answer through unchanged and reads the
// token usage the model reports on the way: in a stream, the last `data:`
// line with a usage member (providers that repeat a running total in
// every chunk end with the whole); in a plain JSON answer, its usage. On
// Close it hands what it found to done, once; an answer that reported no
// usage hands nothing. A stream's lines come from runtime/sse's reader,
// fed each piece as it is passed on (the caller's reads decide where a
// piece ends): the reader keeps a line's start until its end comes, and
// a line over maxUsageLine (a big content chunk) passes on unparsed.
type usageReader struct {
	rc    io.ReadCloser
	sse   bool
	lines *sse.Reader // a stream's lines; nil once finished or cut
	buf   []byte      // a plain JSON answer, kept to read its usage
	over  bool        // the JSON answer passed its bound: not parsed
	in    int64
	out   int64
	seen  bool
	once  sync.Once
	done  func(in, out int64)
	// report, when set, is called with every usage the answer reports (in
	// a stream, the running total so far). canCut is true in a stream with
	// more to come: a non-empty answer then cuts the stream there, what
	// follows the line replaced by that SSE event, then EOF.
	report func(in, out int64, canCut bool) []byte
	tail   []byte // the cutting event not yet read
	cut    bool
	ending bool // finish is parsing what is left: nothing follows
}

func newUsageReader(rc io.ReadCloser, contentType string, done func(in, out int64)) *usageReader {
	mt, _, _ := mime.ParseMediaType(contentType)
	u := &usageReader{rc: rc, sse: mt == "text/event-stream", done: done}
	if u.sse {
		u.lines = sse.NewFedReader(maxUsageLine + 1) // the bound counts the LF
	}
	return u
}

func (u *usageReader) Read(p []byte) (int, error) {
	if u.cut {
		if len(u.tail) == 0 {
			u.finish()
			return 0, io.EOF
		}
		n := copy(p, u.tail)
		u.tail = u.tail[n:]
		return n, nil
	}
	n, err := u.rc.Read(p)
	if n > 0 {
		if k := u.scan(p[:n]); k >= 0 {
			// Cut: the bytes after the crossing line are never passed on.
			u.cut = true
			return k, nil
		}
	}
	if err == io.EOF {
		u.finish()
	}
	return n, err
}

// scan reads b for usage; it returns the length of b to pass on when the
// stream is cut inside it, else -1.
func (u *usageReader) scan(b []byte) int {
	if !u.sse {
		if !u.over && len(u.buf)+len(b) <= maxUsageBody {
			u.buf = append(u.buf, b...)
		} else {
			u.over, u.buf = true, nil
		}
		return -1
	}
	if u.lines == nil {
		return -1
	}
	u.lines.Feed(b)
	for {
		line, err := u.lines.Line()
		if errors.Is(err, sse.ErrLineTooLong) {
			continue // passed on, not parsed
		}
		if err != nil {
			return -1 // ErrMore: b is read up to its last whole line
		}
		if u.line(line) {
			k := len(b) - u.lines.Unread()
			u.release()
			return k
		}
	}
}

// line parses one SSE line; true when the usage it reported cuts the
// stream.
func (u *usageReader) line(l []byte) bool {
	name, data := sse.Field(l)
	if string(name) != "data" || !bytes.Contains(data, []byte(`"usage"`)) {
		return false
	}
	if u.parse(bytes.TrimSpace(data)) && u.report != nil {
		if ev := u.report(u.in, u.out, !u.ending); len(ev) > 0 && !u.ending {
			u.tail = ev
			return true
		}
	}
	return false
}

// release gives the stream's line reader back: the stream is over or cut.
func (u *usageReader) release() {
	if u.lines != nil {
		u.lines.Release()
		u.lines = nil
	}
}

func (u *usageReader) parse(b []byte) bool {
	var w wireUsage
	if json.Unmarshal(b, &w) != nil || w.Usage == nil || w.Usage.Prompt < 0 || w.Usage.Completion < 0 {
		return false
	}
	u.in, u.out, u.seen = w.Usage.Prompt, w.Usage.Completion, true
	return true
}

// finish parses what is left and reports, once.
func (u *usageReader) finish() {
	u.once.Do(func() {
		u.ending = true
		switch {
		case u.lines != nil:
			// The stream ended (or the caller closed it): a last line
			// without its end still counts.
			u.lines.End()
			if line, err := u.lines.Line(); errors.Is(err, io.EOF) && len(line) > 0 {
				u.line(line)
			}
			u.release()
		case !u.sse && !u.over:
			if u.parse(u.buf) && u.report != nil {
				u.report(u.in, u.out, false) // a whole answer is already sent: counted, not cut
			}
		}
		u.buf = nil
		if u.seen {
			u.done(u.in, u.out)
		}
	})
}

// Close reports the usage seen so far (a stream the caller cut short
// still counts what the model reported before) and closes the body.
func (u *usageReader) Close() error {
	u.finish()
	return u.rc.Close()
}
