package modelproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime"
	"regexp"
	"sync"

	"github.com/astraldeep/astralvessel-go/runtime/sse"
)

// maxUsageLine bounds one SSE line kept to look for a usage report; a
// longer line (a big content chunk) is passed through and not parsed.
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
// usage hands nothing. It is no reader of its own: it splits the bytes it
// passes on into lines as they go by (the caller's reads decide where a
// cut may fall) and reads each line with runtime/sse's Field.
type usageReader struct {
	rc   io.ReadCloser
	sse  bool
	buf  []byte
	over bool // the current line (or body) passed its bound: not parsed
	in   int64
	out  int64
	seen bool
	once sync.Once
	done func(in, out int64)
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
	return &usageReader{rc: rc, sse: mt == "text/event-stream", done: done}
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
	off := 0
	for off < len(b) {
		rest := b[off:]
		i := bytes.IndexByte(rest, '\n')
		part := rest
		if i >= 0 {
			part = rest[:i]
		}
		if !u.over {
			if len(u.buf)+len(part) > maxUsageLine {
				u.over, u.buf = true, u.buf[:0]
			} else {
				u.buf = append(u.buf, part...)
			}
		}
		if i < 0 {
			return -1
		}
		off += i + 1
		if u.line() {
			return off
		}
	}
	return -1
}

// line parses the SSE line held in buf and starts the next; true when the
// usage it reported cuts the stream.
func (u *usageReader) line() bool {
	cut := false
	if !u.over {
		name, data := sse.Field(bytes.TrimSuffix(u.buf, []byte{'\r'}))
		if string(name) == "data" && bytes.Contains(data, []byte(`"usage"`)) {
			if u.parse(bytes.TrimSpace(data)) && u.report != nil {
				if ev := u.report(u.in, u.out, !u.ending); len(ev) > 0 && !u.ending {
					u.tail, cut = ev, true
				}
			}
		}
	}
	u.over, u.buf = false, u.buf[:0]
	return cut
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
		case u.sse && len(u.buf) > 0:
			u.line()
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
