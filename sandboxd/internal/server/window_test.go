package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	sandboxv1 "github.com/astraldeep/astralvessel-go/proto/astralvessel/sandbox/v1"
	"golang.org/x/net/http2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// frameCounter tees what the server sends on one connection into an HTTP/2
// frame reader and counts the PING frames that are not acks.
type frameCounter struct {
	net.Conn
	w     *io.PipeWriter
	mu    sync.Mutex
	pings int
	done  chan struct{}
}

func newFrameCounter(c net.Conn) *frameCounter {
	r, w := io.Pipe()
	f := &frameCounter{Conn: c, w: w, done: make(chan struct{})}
	go func() {
		defer close(f.done)
		fr := http2.NewFramer(nil, r)
		fr.SetMaxReadFrameSize(1 << 24)
		for {
			frame, err := fr.ReadFrame()
			if err != nil {
				_, _ = io.Copy(io.Discard, r)
				return
			}
			if p, ok := frame.(*http2.PingFrame); ok && !p.IsAck() {
				f.mu.Lock()
				f.pings++
				f.mu.Unlock()
			}
		}
	}()
	return f
}

func (f *frameCounter) Read(b []byte) (int, error) {
	n, err := f.Conn.Read(b)
	if n > 0 {
		_, _ = f.w.Write(b[:n])
	}
	return n, err
}

func (f *frameCounter) Close() error {
	err := f.Conn.Close()
	f.w.Close()
	<-f.done
	return err
}

// The server's flow-control windows are static: calls, small and larger
// than one window, run without the server sending a single ping (the
// dynamic windows sent a bandwidth-estimate ping for each request), and a
// request bigger than the stream window still arrives whole.
func TestServerSendsNoPingsAndTakesRequestsBeyondItsWindow(t *testing.T) {
	e := newEnv(t, envOpts{outputCap: 8 << 20})
	var counter *frameCounter
	conn, err := grpc.NewClient(e.addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
			if err != nil {
				return nil, err
			}
			counter = newFrameCounter(c)
			return counter, nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	client := sandboxv1.NewRunServiceClient(conn)
	ctx, cancel := context.WithTimeout(authCtx(context.Background(), testToken), 60*time.Second)
	defer cancel()
	run := func(tool, args string) string {
		t.Helper()
		st, err := client.Run(ctx, &sandboxv1.RunRequest{TurnId: "win", Owner: "app/alice", CallId: "c", Tool: tool, ArgumentsJson: args})
		if err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		for {
			ev, err := st.Recv()
			if err == io.EOF {
				return out.String()
			}
			if err != nil {
				t.Fatalf("%s: %v", tool, err)
			}
			if x, ok := ev.Event.(*sandboxv1.RunResponse_Stdout); ok {
				out.Write(x.Stdout)
			}
			if x, ok := ev.Event.(*sandboxv1.RunResponse_Exit); ok && (x.Exit.Code != 0 || x.Exit.Error != "") {
				t.Fatalf("%s: exit %v", tool, x.Exit)
			}
		}
	}
	for i := range 5 {
		if out := run("bash", jsonArgs("command", "echo call-"+string(rune('0'+i)))); out != "call-"+string(rune('0'+i))+"\n" {
			t.Fatalf("call %d printed %q", i, out)
		}
	}
	big := strings.Repeat("w", 3<<20) // three stream windows
	args, _ := json.Marshal(map[string]string{"text": big})
	out := run("echoargs", string(args))
	var back map[string]string
	if err := json.Unmarshal([]byte(out), &back); err != nil || back["text"] != big {
		t.Fatalf("the %d-byte request came back as %d bytes (%v)", len(args), len(out), err)
	}
	if _, err := client.EndTurn(ctx, mkEnd("win")); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	counter.mu.Lock()
	defer counter.mu.Unlock()
	if counter.pings != 0 {
		t.Fatalf("the server sent %d pings", counter.pings)
	}
}
