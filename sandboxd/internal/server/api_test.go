package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	sandboxv1 "github.com/astraldeep/astralvessel-go/proto/astralvessel/sandbox/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

func TestTokenRequiredOnEveryMethod(t *testing.T) {
	e := newEnv(t, envOpts{})
	for name, ctx := range map[string]context.Context{
		"missing":   context.Background(),
		"wrong":     authCtx(context.Background(), "wrong-token"),
		"prefix":    authCtx(context.Background(), testToken[:10]),
		"no bearer": metadata.AppendToOutgoingContext(context.Background(), "authorization", testToken),
	} {
		t.Run("grpc "+name, func(t *testing.T) {
			_, err := e.client.Status(ctx, &sandboxv1.StatusRequest{})
			if status.Code(err) != codes.Unauthenticated {
				t.Fatalf("Status: %v", err)
			}
			_, err = e.client.EndTurn(ctx, mkEnd("turn-1"))
			if status.Code(err) != codes.Unauthenticated {
				t.Fatalf("EndTurn: %v", err)
			}
			_, err = e.client.ListTurns(ctx, &sandboxv1.ListTurnsRequest{})
			if status.Code(err) != codes.Unauthenticated {
				t.Fatalf("ListTurns: %v", err)
			}
			st, err := e.client.Run(ctx, mkReq("turn-tok", "bash", jsonArgs("command", "touch /dev/null/ran")))
			if err == nil {
				_, err = st.Recv()
			}
			if status.Code(err) != codes.Unauthenticated {
				t.Fatalf("Run: %v", err)
			}
		})
	}
	if _, ok := e.wm.Lookup("turn-tok"); ok {
		t.Fatal("an unauthenticated Run created a workspace")
	}
	for name, header := range map[string]string{"missing": "", "wrong": "Bearer nope", "basic": "Basic " + testToken} {
		t.Run("http "+name, func(t *testing.T) {
			for _, req := range []*http.Request{
				mustReq(t, "GET", "http://"+e.httpAddr+"/status", ""),
				mustReq(t, "GET", "http://"+e.httpAddr+"/turns", ""),
				mustReq(t, "POST", "http://"+e.httpAddr+"/end-turn", `{"turn_id":"turn-1"}`),
				mustReq(t, "POST", "http://"+e.httpAddr+"/run", `{"turn_id":"turn-tok","tool":"bash","arguments_json":"{\"command\":\"true\"}"}`),
			} {
				if header != "" {
					req.Header.Set("Authorization", header)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusUnauthorized && !strings.Contains(string(body), `"code":16`) {
					t.Fatalf("%s %s: %d %s", req.Method, req.URL.Path, resp.StatusCode, body)
				}
			}
		})
	}
}

func mustReq(t *testing.T, method, url, body string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func TestHTTPRunAndStatus(t *testing.T) {
	e := newEnv(t, envOpts{})
	req := mustReq(t, "GET", "http://"+e.httpAddr+"/status", "")
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var st map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&st)
	resp.Body.Close()
	if st["confined"] != true || st["fingerprint"] != "sha256:test" || st["agent"] != "test" {
		t.Fatalf("status: %v", st)
	}
	req = mustReq(t, "POST", "http://"+e.httpAddr+"/run", `{"turn_id":"turn-h","owner":"app/alice","tool":"bash","arguments_json":"{\"command\":\"echo hello\"}"}`)
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	var out string
	var exit map[string]any
	for {
		var msg struct {
			Result map[string]any `json:"result"`
		}
		if err := dec.Decode(&msg); err != nil {
			break
		}
		if s, ok := msg.Result["stdout"].(string); ok {
			out += s
		}
		if x, ok := msg.Result["exit"].(map[string]any); ok {
			exit = x
		}
	}
	if out != "aGVsbG8K" || exit == nil || exit["code"] != float64(0) {
		t.Fatalf("stdout %q exit %v", out, exit)
	}
}

// gRPC and the HTTP/JSON gateway have a port each: the gRPC port answers
// no HTTP/1 request, the gateway's serves JSON, and a client that sends
// nothing on either holds up no one else.
func TestGRPCAndGatewayOnTheirOwnPorts(t *testing.T) {
	e := newEnv(t, envOpts{})
	for _, addr := range []string{e.addr, e.httpAddr} {
		silent, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer silent.Close()
	}
	conn, err := grpc.NewClient(e.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Bounds only, so a regression fails instead of hanging.
	ctx, cancel := context.WithTimeout(authCtx(context.Background(), testToken), 30*time.Second)
	defer cancel()
	if _, err = sandboxv1.NewRunServiceClient(conn).Status(ctx, &sandboxv1.StatusRequest{}); err != nil {
		t.Fatalf("gRPC Status on a new connection next to a silent one: %v", err)
	}
	get := func(addr string) (*http.Response, error) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(30 * time.Second))
		if _, err := io.WriteString(c, "GET /status HTTP/1.0\r\nAuthorization: Bearer "+testToken+"\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		return resp, err
	}
	resp, err := get(e.httpAddr)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /status on the gateway's port: %v %v", resp, err)
	}
	if resp, err := get(e.addr); err == nil {
		t.Fatalf("the gRPC port answered HTTP/1: %s", resp.Status)
	}
}

// ListTurns reports each live turn with its owner, running calls and
// usage, and forgets ended ones.
func TestListTurns(t *testing.T) {
	e := newEnv(t, envOpts{})
	e.bash("turn-l1", "head -c 10000 /dev/zero > f")
	e.must(call{turn: "turn-l2", owner: "app/bob", tool: "bash", args: jsonArgs("command", "true")})
	e.wm.Check(t.Logf)
	resp, err := e.client.ListTurns(authCtx(context.Background(), testToken), &sandboxv1.ListTurnsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*sandboxv1.TurnInfo{}
	for _, ti := range resp.GetTurns() {
		got[ti.GetTurnId()] = ti
	}
	if len(got) != 2 || got["turn-l1"].GetOwner() != "app/alice" || got["turn-l2"].GetOwner() != "app/bob" ||
		got["turn-l1"].GetUsageBytes() < 10000 || got["turn-l1"].GetRunningCalls() != 0 {
		t.Fatalf("turns: %v", resp.GetTurns())
	}
	if _, err := e.client.EndTurn(authCtx(context.Background(), testToken), mkEnd("turn-l1")); err != nil {
		t.Fatal(err)
	}
	resp, _ = e.client.ListTurns(authCtx(context.Background(), testToken), &sandboxv1.ListTurnsRequest{})
	if len(resp.GetTurns()) != 1 || resp.GetTurns()[0].GetTurnId() != "turn-l2" {
		t.Fatalf("after EndTurn: %v", resp.GetTurns())
	}
}
