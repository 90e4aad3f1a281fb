package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"google.golang.org/grpc"

	sandboxv1 "github.com/astraldeep/astralvessel-go/proto/astralvessel/sandbox/v1"
	"github.com/astraldeep/astralvessel-go/vessel/tools"
)

// scriptedSandbox serves a scripted server: it answers initialize and
// tools/list itself and tools/call with reply, cut into pieces of split
// bytes, as the process's stdout.
type scriptedSandbox struct {
	reply atomic.Value // []byte
	split atomic.Int32
	mu    sync.Mutex
	hooks []func(string)
}

func (s *scriptedSandbox) Serve(ctx context.Context, _, _, _ string, _ time.Duration) (tools.ServeStream, error) {
	ctx, cancel := context.WithCancel(ctx)
	return &scriptedStream{sb: s, ctx: ctx, cancel: cancel, out: make(chan *sandboxv1.ServeResponse, 1024)}, nil
}

func (s *scriptedSandbox) EndTurn(_ context.Context, id string) error {
	s.mu.Lock()
	hooks := append([]func(string){}, s.hooks...)
	s.mu.Unlock()
	for _, h := range hooks {
		h(id)
	}
	return nil
}

func (s *scriptedSandbox) OnEndTurn(f func(string)) {
	s.mu.Lock()
	s.hooks = append(s.hooks, f)
	s.mu.Unlock()
}

type scriptedStream struct {
	grpc.BidiStreamingClient[sandboxv1.ServeRequest, sandboxv1.ServeResponse]
	sb     *scriptedSandbox
	ctx    context.Context
	cancel context.CancelFunc
	in     bytes.Buffer
	out    chan *sandboxv1.ServeResponse
}

func (s *scriptedStream) stdout(b []byte) {
	n := max(int(s.sb.split.Load()), 1)
	for len(b) > 0 {
		k := min(n, len(b))
		select {
		case s.out <- &sandboxv1.ServeResponse{Event: &sandboxv1.ServeResponse_Stdout{Stdout: bytes.Clone(b[:k])}}:
		default: // a reader that stopped reading loses the rest
			return
		}
		b = b[k:]
	}
}

func (s *scriptedStream) Send(req *sandboxv1.ServeRequest) error {
	s.in.Write(req.GetStdin())
	for {
		line, err := s.in.ReadBytes('\n')
		if err != nil {
			s.in.Write(line)
			return nil
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(line, &msg) != nil || msg.ID == nil {
			continue
		}
		switch msg.Method {
		case "initialize":
			s.stdout(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`+"\n", msg.ID))
		case "tools/list":
			s.stdout(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"x","inputSchema":{"type":"object"}}]}}`+"\n", msg.ID))
		case "tools/call":
			s.stdout(bytes.ReplaceAll(s.sb.reply.Load().([]byte), []byte("ID"), msg.ID))
		}
	}
}

func (s *scriptedStream) Recv() (*sandboxv1.ServeResponse, error) {
	select {
	case r := <-s.out:
		return r, nil
	case <-s.ctx.Done():
		return nil, io.EOF
	}
}

func (s *scriptedStream) CloseSend() error { s.cancel(); return nil }

// Whatever a stdio server writes as its answer, a call ends as a result
// or a failed call with UTF-8 text, in bounded time.
func FuzzStdioReply(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":ID,"result":{"content":[{"type":"text","text":"hi"}]}}`+"\n"), uint8(7))
	f.Add([]byte(`{"jsonrpc":"2.0","id":ID,"result":{"content":[{"type":"image","mimeType":"image/png","data":"AAAA"}]}}`+"\n"), uint8(200))
	f.Add([]byte(`{"jsonrpc":"2.0","id":ID,"error":{"code":1,"message":"x"}}`+"\n"), uint8(1))
	f.Add([]byte("not json\n"), uint8(3))
	f.Add(bytes.Repeat([]byte("x"), 70000), uint8(255))
	sb := &scriptedSandbox{}
	sb.reply.Store([]byte{})
	a := stdioAgent("s", "x")
	a.Manifest.MCP[0].MCP.TimeoutSecs = 0
	list, err := StdioTools(sb, a, &Client{MaxResponse: 1 << 16, Timeout: 200 * time.Millisecond})
	if err != nil {
		f.Fatal(err)
	}
	tl := list[0].(*Tool)
	var n atomic.Int64
	f.Fuzz(func(t *testing.T, reply []byte, split uint8) {
		sb.reply.Store(reply)
		sb.split.Store(int32(split))
		turn := &tools.Turn{ID: fmt.Sprintf("fuzz-%d", n.Add(1)), Owner: "web/alice"}
		res, err := tl.Run(context.Background(), turn, tools.Call{Arguments: `{}`})
		_ = sb.EndTurn(context.Background(), turn.ID)
		if err != nil || res == nil {
			t.Fatalf("reply %q: %v %v", reply, res, err)
		}
		if !utf8.ValidString(res.Output) {
			t.Fatalf("output is not UTF-8: %q", res.Output)
		}
	})
}
