// Package store keeps tasks: a2a-go's taskstore.Store per agent, bound to
// owners (another owner's task is "not found"), with optimistic versions.
// The embedded default is SQLite; other backends (PostgreSQL) register an
// Opener. A stored task keeps only its latest status, the user's text and
// the answer (see Strip).
package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
)

// Backend is an open task database serving several agents.
type Backend interface {
	// Agent returns the store of one agent; tasks of different agents never
	// mix even when their ids collide.
	Agent(agentID string) taskstore.Store
	// Close stops background work and releases the database.
	Close() error
}

// CallCarrier carries what a message forwarded to another replica needs of
// its caller's call (who called, with which tools and added approvals), so
// that the replica running the message handles it as if it had come there.
type CallCarrier interface {
	// Capture encodes the call of ctx, on the replica that received it,
	// just before the message is forwarded: what the call holds there for
	// a turn (its [limits] place) is given back, as the turn will run and
	// count on the replica holding the task.
	Capture(ctx context.Context) ([]byte, error)
	// Restore rebuilds it into ctx, on the replica that runs the message,
	// with the turn's place there; end gives back what the message's
	// handling did not hand to a turn, once the handler returned.
	Restore(ctx context.Context, call []byte) (_ context.Context, end func(), _ error)
}

// CallCarrying is a backend whose replicas forward messages to each other;
// the server gives it each agent's CallCarrier.
type CallCarrying interface {
	CarryCalls(agentID string, c CallCarrier)
}

// Pinger is a backend that can tell whether it works; /health and
// readiness use it.
type Pinger interface {
	Ping(ctx context.Context) error
}

// Options configure a backend.
type Options struct {
	// Agents are the agent ids served (SQLite fails their tasks left
	// running by the previous run when it opens).
	Agents []string
	// TTL deletes tasks this long after their last update; 0 keeps them.
	TTL time.Duration
	// CleanupInterval is how often the TTL is applied; default 10 minutes.
	CleanupInterval time.Duration
	// Strip reduces a task to what is stored; default Strip.
	Strip func(*a2a.Task) *a2a.Task
	// Now is the clock of the SQLite store's update times and TTL (tests);
	// default time.Now.
	Now func() time.Time
}

// Opener opens a backend for a URL of its scheme.
type Opener func(ctx context.Context, url string, opt Options) (Backend, error)

var (
	openersMu sync.Mutex
	openers   = map[string]Opener{"sqlite": openSQLite}
)

// Register adds a backend for URLs "<scheme>://...". cmd/vessel registers
// "postgres" (and "postgresql") this way.
func Register(scheme string, o Opener) {
	openersMu.Lock()
	defer openersMu.Unlock()
	openers[scheme] = o
}

// Open opens the backend named by url's scheme: sqlite:///path/tasks.sqlite
// or a registered one such as postgres://.
func Open(ctx context.Context, url string, opt Options) (Backend, error) {
	if opt.Strip == nil {
		opt.Strip = Strip
	}
	if opt.CleanupInterval <= 0 {
		opt.CleanupInterval = 10 * time.Minute
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	scheme, _, ok := strings.Cut(url, "://")
	if !ok {
		return nil, fmt.Errorf("task store %q: want sqlite:///path or postgres://host/db", url)
	}
	openersMu.Lock()
	o := openers[scheme]
	openersMu.Unlock()
	if o == nil {
		return nil, fmt.Errorf("task store: no backend for scheme %q", scheme)
	}
	b, err := o(ctx, url, opt)
	if err != nil {
		return nil, fmt.Errorf("task store: %w", err)
	}
	return b, nil
}

// ErrNoOwner is returned when a call carries no authenticated user; it
// never happens for requests that passed the vessel's middleware.
var ErrNoOwner = errors.New("task store: call has no owner")

// Owner returns the caller's owner string from the SDK's call context.
func Owner(ctx context.Context) (string, error) {
	cc, ok := a2asrv.CallContextFrom(ctx)
	if !ok || cc.User == nil || cc.User.Name == "" {
		return "", ErrNoOwner
	}
	return cc.User.Name, nil
}

// AnswerArtifactName names the artifact that holds the answer.
const AnswerArtifactName = "answer"

// Strip keeps what a stored task may hold: id, context, status (with its
// message), metadata, the user's text parts, and the answer artifact. It
// drops the history sent in, images, streamed pieces, the transcript and
// files. It never modifies t.
func Strip(t *a2a.Task) *a2a.Task {
	if t == nil {
		return nil
	}
	out := *t
	out.History = UserText(t.History)
	out.Artifacts = nil
	for _, a := range t.Artifacts {
		if a != nil && a.Name == AnswerArtifactName {
			out.Artifacts = append(out.Artifacts, a)
		}
	}
	return &out
}

// Shrink trims, in place, the task the SDK hands to Update: the history to
// the user's text, and artifacts that are complete and never stored (the
// transcript after its last chunk, files). The SDK keeps that very task as
// its working copy and deep-copies it (gob) twice per event, so without
// this every later event would copy every status message and every
// file's bytes again. Both backends call it first thing in Update.
func Shrink(req *taskstore.UpdateRequest) {
	if req == nil || req.Task == nil {
		return
	}
	req.Task.History = UserText(req.Task.History)
	ev, ok := req.Event.(*a2a.TaskArtifactUpdateEvent)
	if !ok || !ev.LastChunk || ev.Artifact == nil || ev.Artifact.Name == AnswerArtifactName {
		return
	}
	id := ev.Artifact.ID
	kept := req.Task.Artifacts[:0:0]
	for _, a := range req.Task.Artifacts {
		if a == nil || a.ID != id {
			kept = append(kept, a)
		}
	}
	req.Task.Artifacts = kept
}

// UserText keeps the text parts of user messages (what the user asked).
func UserText(history []*a2a.Message) []*a2a.Message {
	var out []*a2a.Message
	for _, m := range history {
		if m == nil || m.Role != a2a.MessageRoleUser {
			continue
		}
		var parts a2a.ContentParts
		for _, p := range m.Parts {
			if p == nil {
				continue
			}
			if _, ok := p.Content.(a2a.Text); ok && (p.MediaType == "" || strings.HasPrefix(p.MediaType, "text/")) {
				parts = append(parts, p)
			}
		}
		if len(parts) == 0 {
			continue
		}
		cm := *m
		cm.Parts = parts
		out = append(out, &cm)
	}
	return out
}
