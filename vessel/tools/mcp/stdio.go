package mcp

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	sandboxv1 "github.com/astraldeep/astralvessel-go/proto/astralvessel/sandbox/v1"
	"github.com/astraldeep/astralvessel-go/vessel/settings"
	"github.com/astraldeep/astralvessel-go/vessel/tools"
)

// Sandbox runs the stdio MCP servers an agent's package declares: the
// agent's sandboxd client (tools.Sandbox).
type Sandbox interface {
	Serve(ctx context.Context, turnID, owner, server string, idle time.Duration) (tools.ServeStream, error)
	EndTurn(ctx context.Context, turnID string) error
	OnEndTurn(func(turnID string))
}

// Bounds of a stdio server's sessions.
const (
	// StdioIdle is the idle time the vessel asks the sandbox for: a turn's
	// server that has seen no byte for this long is stopped (and started
	// again by the turn's next call of it).
	StdioIdle = 5 * time.Minute
	// maxStdin is the most bytes of one stdin message (the sandbox's
	// MaxServeChunk).
	maxStdin = 1 << 20
	// stderrTail is how much of a server's stderr is kept to explain its end.
	stderrTail = 2048
	// listOwner owns the turns the vessel opens to list a server's tools.
	listOwner = "vessel/mcp-list"
)

// stdioServer is the per-turn side of a server run in the sandbox.
type stdioServer struct {
	sb    Sandbox
	mu    sync.Mutex
	turns map[string]*turnSession
}

// turnSession is a turn's session with a server: one process, started
// by the turn's first call of one of its tools.
type turnSession struct {
	ready  chan struct{} // closed once started (or failed)
	cs     *mcp.ClientSession
	st     *session
	err    error
	cancel context.CancelFunc
}

// StdioTools builds the tools of every MCP server agent's package
// declares, run by sb. Only listed tools are offered; a server declared
// with tools = ["*"] offers every valid tool it lists (see Server.Tools).
func StdioTools(sb Sandbox, agent *settings.Agent, c *Client) ([]tools.Tool, error) {
	if agent == nil || agent.Manifest == nil || len(agent.Manifest.MCP) == 0 || sb == nil {
		return nil, nil
	}
	if c == nil {
		c = &Client{}
	}
	var out []tools.Tool
	for _, d := range agent.Manifest.MCP {
		if d.MCP == nil {
			continue
		}
		s := &Server{client: c, agent: agent.ID, name: d.Name, grant: d.MCP.Grant(), stdio: stdioFor(sb, agent.ID, d.Name)}
		out = append(out, s.Tools()...)
	}
	return out, nil
}

// stdioServers are the per-turn sides by sandbox, agent and server: an
// agent rebuilt on a reload keeps its turns' sessions and registers its
// turn-end hook once.
var (
	stdioMu      sync.Mutex
	stdioServers = map[stdioKey]*stdioServer{}
)

type stdioKey struct {
	sb            Sandbox
	agent, server string
}

func stdioFor(sb Sandbox, agent, server string) *stdioServer {
	stdioMu.Lock()
	defer stdioMu.Unlock()
	k := stdioKey{sb, agent, server}
	if ss, ok := stdioServers[k]; ok {
		return ss
	}
	ss := &stdioServer{sb: sb, turns: map[string]*turnSession{}}
	sb.OnEndTurn(ss.endTurn)
	stdioServers[k] = ss
	return ss
}

// open returns the turn's session, starting the server on the turn's
// first call; a listing (turn nil) gets a turn of its own, ended after.
func (ss *stdioServer) open(ctx context.Context, s *Server, turn *tools.Turn) (*mcp.ClientSession, *session, func(), error) {
	if turn == nil {
		id := "mcp-list." + s.name + "." + randomHex()
		ts := ss.start(ctx, s, id, listOwner)
		<-ts.ready
		end := func() {
			ts.close()
			ectx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			_ = ss.sb.EndTurn(ectx, id)
		}
		if ts.err != nil {
			end()
			return nil, ts.st, nil, ts.err
		}
		return ts.cs, ts.st, end, nil
	}
	ss.mu.Lock()
	ts, ok := ss.turns[turn.ID]
	if !ok {
		ts = ss.start(ctx, s, turn.ID, turn.Owner)
		ss.turns[turn.ID] = ts
	}
	ss.mu.Unlock()
	select {
	case <-ts.ready:
	case <-ctx.Done():
		return nil, ts.st, nil, ctx.Err()
	}
	if ts.err != nil {
		ss.forget(turn.ID, ts)
		return nil, ts.st, nil, ts.err
	}
	return ts.cs, ts.st, func() {}, nil
}

// start opens the Serve stream and the MCP session over it, in the
// background, bounded by ctx (the first call's time).
func (ss *stdioServer) start(ctx context.Context, s *Server, turnID, owner string) *turnSession {
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	ts := &turnSession{ready: make(chan struct{}), st: &session{max: s.client.maxResponse()}, cancel: cancel}
	go func() {
		defer close(ts.ready)
		stream, err := ss.sb.Serve(sctx, turnID, owner, s.name, StdioIdle)
		if err != nil {
			ts.err = err
			cancel()
			return
		}
		sio := &streamIO{stream: stream, st: ts.st, cancel: cancel}
		ts.st.exit = sio.exitText
		cl := mcp.NewClient(&mcp.Implementation{Name: userAgent, Version: "1"}, nil)
		tr := &mcp.IOTransport{Reader: sio, Writer: &streamWriter{io: sio}, MaxLineLength: -1}
		cs, err := cl.Connect(ctx, tr, nil)
		if err != nil {
			ts.err = err
			cancel()
			return
		}
		ts.cs = cs
		// A session that ends (the process exited, the sandbox stopped it)
		// is forgotten, so the turn's next call starts the server again.
		go func() {
			_ = cs.Wait()
			if turnID != "" {
				ss.forget(turnID, ts)
			}
		}()
	}()
	return ts
}

func (ss *stdioServer) forget(turnID string, ts *turnSession) {
	ss.mu.Lock()
	if ss.turns[turnID] == ts {
		delete(ss.turns, turnID)
	}
	ss.mu.Unlock()
}

// drop closes the turn's session if it is still the one st belongs to.
func (ss *stdioServer) drop(turnID string, st *session) {
	ss.mu.Lock()
	ts := ss.turns[turnID]
	if ts == nil || ts.st != st {
		ss.mu.Unlock()
		return
	}
	delete(ss.turns, turnID)
	ss.mu.Unlock()
	go ts.close()
}

// endTurn closes the turn's session; the sandbox kills the process and
// everything it started when it ends the turn.
func (ss *stdioServer) endTurn(turnID string) {
	ss.mu.Lock()
	ts := ss.turns[turnID]
	delete(ss.turns, turnID)
	ss.mu.Unlock()
	if ts != nil {
		go ts.close()
	}
}

func (ts *turnSession) close() {
	<-ts.ready
	if ts.cs != nil {
		_ = ts.cs.Close()
	}
	ts.cancel()
}

func randomHex() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// streamIO reads a served process's stdout from its Serve stream, bounding
// one message (a line) by the session's bytes; it keeps the tail of
// stderr and the exit to explain an end.
type streamIO struct {
	stream tools.ServeStream
	st     *session
	cancel context.CancelFunc
	buf    []byte
	line   int64 // bytes since the last new line

	mu     sync.Mutex
	exit   *sandboxv1.Exit
	stderr []byte
	sendMu sync.Mutex
}

func (r *streamIO) Read(p []byte) (int, error) {
	for len(r.buf) == 0 {
		resp, err := r.stream.Recv()
		if err != nil {
			return 0, io.EOF
		}
		switch ev := resp.GetEvent().(type) {
		case *sandboxv1.ServeResponse_Stdout:
			r.st.reached.Store(true)
			r.buf = ev.Stdout
		case *sandboxv1.ServeResponse_Stderr:
			r.mu.Lock()
			r.stderr = append(r.stderr, ev.Stderr...)
			if len(r.stderr) > stderrTail {
				r.stderr = r.stderr[len(r.stderr)-stderrTail:]
			}
			r.mu.Unlock()
		case *sandboxv1.ServeResponse_Exit:
			r.mu.Lock()
			r.exit = ev.Exit
			r.mu.Unlock()
			return 0, io.EOF
		}
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	if i := bytes.LastIndexByte(p[:n], '\n'); i >= 0 {
		r.line = int64(n - 1 - i)
	} else {
		r.line += int64(n)
	}
	if r.line > r.st.max {
		r.st.oversize.Store(true)
		return 0, errOversize
	}
	return n, nil
}

// Close ends the stream; the sandbox stops the process.
func (r *streamIO) Close() error {
	r.cancel()
	return nil
}

// exitText says how the process ended, "" while it runs.
func (r *streamIO) exitText() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	ex := r.exit
	if ex == nil {
		return ""
	}
	var why string
	switch {
	case ex.GetError() != "":
		why = ex.GetError()
	case ex.GetStopped() == "idle":
		why = "the sandbox stopped it after it had been idle too long"
	case ex.GetTruncated():
		why = "the sandbox stopped it: it wrote more than the sandbox takes"
	case ex.GetStopped() != "":
		why = "the sandbox stopped it (" + ex.GetStopped() + ")"
	case ex.GetSignal() != "":
		why = "it was killed by " + ex.GetSignal()
	default:
		why = fmt.Sprintf("it exited with code %d", ex.GetCode())
	}
	if tail := strings.TrimSpace(strings.ToValidUTF8(string(r.stderr), "\uFFFD")); tail != "" {
		why += "; its last error output: " + truncate(tail, 500)
	}
	return why
}

// streamWriter sends stdin to a served process in messages the sandbox takes.
type streamWriter struct{ io *streamIO }

func (w *streamWriter) Write(p []byte) (int, error) {
	w.io.sendMu.Lock()
	defer w.io.sendMu.Unlock()
	for off := 0; off < len(p); off += maxStdin {
		end := min(off+maxStdin, len(p))
		chunk := bytes.Clone(p[off:end])
		if err := w.io.stream.Send(&sandboxv1.ServeRequest{Event: &sandboxv1.ServeRequest_Stdin{Stdin: chunk}}); err != nil {
			return off, fmt.Errorf("the MCP server's stream: %w", err)
		}
	}
	return len(p), nil
}

func (w *streamWriter) Close() error {
	w.io.sendMu.Lock()
	defer w.io.sendMu.Unlock()
	err := w.io.stream.Send(&sandboxv1.ServeRequest{Event: &sandboxv1.ServeRequest_CloseStdin{CloseStdin: true}})
	return errors.Join(err, w.io.stream.CloseSend())
}
