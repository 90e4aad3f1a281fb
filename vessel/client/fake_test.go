package client

import (
	"context"
	"encoding/json"
	"iter"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// fakeExecutor emits the vessel's frame order: task, working status updates
// each carrying one event, transcript chunks, a file, the answer, and the
// final status with turn.finished.
type fakeExecutor struct {
	mu      sync.Mutex
	started chan a2a.TaskID // receives the task id of "slow" turns
	seen    []*a2a.Message
}

func eventStatus(ec *a2asrv.ExecutorContext, state a2a.TaskState, typ string, data map[string]any) *a2a.TaskStatusUpdateEvent {
	msg := a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewDataPart(data))
	ev := a2a.NewStatusUpdateEvent(ec, state, msg)
	ev.SetMeta(metaEventKey, typ)
	return ev
}

func (f *fakeExecutor) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		f.mu.Lock()
		f.seen = append(f.seen, ec.Message)
		f.mu.Unlock()
		if ec.StoredTask == nil && !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
			return
		}
		text, history := "", 0
		for _, p := range ec.Message.Parts {
			switch c := p.Content.(type) {
			case a2a.Text:
				text += string(c)
			case a2a.Raw:
				if p.MediaType == TranscriptMediaType {
					msgs, err := DecodeEnvelope(c)
					if err != nil {
						yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateRejected,
							a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewTextPart("malformed history"))), nil)
						return
					}
					history = len(msgs)
				}
			}
		}
		if text == "" {
			yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateRejected,
				a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewTextPart("the message has no text"))), nil)
			return
		}
		if !yield(eventStatus(ec, a2a.TaskStateWorking, EventTurnStarted, map[string]any{"agent": "birds"}), nil) {
			return
		}
		if text == "slow" {
			f.started <- ec.TaskID
			<-ctx.Done()
			return
		}
		steps := []a2a.Event{
			eventStatus(ec, a2a.TaskStateWorking, EventReasoningDelta, map[string]any{"text": "thinking"}),
			eventStatus(ec, a2a.TaskStateWorking, EventToolStarted, map[string]any{"call_id": "c1", "name": "species", "arguments": map[string]any{"n": 2.0}}),
			eventStatus(ec, a2a.TaskStateWorking, EventToolFinished, map[string]any{"call_id": "c1", "name": "species", "ok": true, "preview": "osprey", "exit_code": 0.0}),
			eventStatus(ec, a2a.TaskStateWorking, EventFileAttached, map[string]any{"call_id": "c1", "name": "map.png", "media_type": "image/png", "size": 4.0}),
			eventStatus(ec, a2a.TaskStateWorking, EventTextDelta, map[string]any{"text": "The osprey "}),
			eventStatus(ec, a2a.TaskStateWorking, EventTextDelta, map[string]any{"text": "hunts fish."}),
			eventStatus(ec, a2a.TaskStateWorking, "future.event", map[string]any{"x": 1.0}),
		}
		for _, ev := range steps {
			if !yield(ev, nil) {
				return
			}
		}
		env, _ := EncodeEnvelope([]Message{
			UserMessage(text),
			{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": "c1", "type": "function", "function": map[string]any{"name": "species", "arguments": "{}"}}}},
			{"role": "tool", "tool_call_id": "c1", "content": "osprey"},
			AssistantMessage("The osprey hunts fish. history=" + itoa(history)),
		})
		half := len(env) / 2
		first := a2a.NewArtifactEvent(ec, &a2a.Part{Content: a2a.Raw(env[:half]), MediaType: TranscriptMediaType})
		first.Artifact.Name = artifactTranscript
		second := a2a.NewArtifactUpdateEvent(ec, first.Artifact.ID, &a2a.Part{Content: a2a.Raw(env[half:]), MediaType: TranscriptMediaType})
		second.LastChunk = true
		file := a2a.NewArtifactEvent(ec, &a2a.Part{Content: a2a.Raw([]byte{0x89, 'P', 'N', 'G'}), MediaType: "image/png", Filename: "map.png", Metadata: map[string]any{"call_id": "c1"}})
		file.Artifact.Name = artifactFile
		file.LastChunk = true
		answer := a2a.NewArtifactEvent(ec,
			&a2a.Part{Content: a2a.Text("The **osprey** hunts fish."), MediaType: MarkdownMediaType},
			&a2a.Part{Content: a2a.Data{Value: map[string]any{"components": []any{map[string]any{"type": "card", "n": 3.0}}}}, MediaType: PrimitivesMediaType})
		answer.Artifact.Name = artifactAnswer
		answer.LastChunk = true
		for _, ev := range []a2a.Event{first, second, file, answer} {
			if !yield(ev, nil) {
				return
			}
		}
		yield(eventStatus(ec, a2a.TaskStateCompleted, EventTurnFinished, map[string]any{
			"status": "ok", "prompt_tokens": 12.0, "completion_tokens": 7.0, "steps": 2.0, "elapsed_ms": 1500.0,
		}), nil)
	}
}

func (f *fakeExecutor) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(eventStatus(ec, a2a.TaskStateCanceled, EventTurnFinished, map[string]any{"status": "cancelled"}), nil)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// fakeVessel serves agent "birds" with the executor behind the vessel's
// HTTP checks (auth 401, ungranted 403, not ready 503, size 413).
type fakeVessel struct {
	srv *httptest.Server
	// grpcAddr serves the same agents over gRPC (tenant = agent), with
	// the same refusals as gRPC statuses and a 4000-byte message limit.
	grpcAddr string
	exec     *fakeExecutor
	mu       sync.Mutex
	hdrs     []http.Header
}

const testKey = "good-key"

func newFakeVessel(t *testing.T) *fakeVessel {
	t.Helper()
	fv := &fakeVessel{exec: &fakeExecutor{started: make(chan a2a.TaskID, 4)}}
	h := a2asrv.NewHandler(fv.exec)
	rpc := a2asrv.NewJSONRPCHandler(h)
	rest := a2asrv.NewRESTHandler(h)
	fv.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		agent, sub, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/agents/"), "/")
		isREST := strings.HasPrefix(sub, "v1/")
		// The vessel's refusals: JSON-RPC errors, or google.rpc.Status on REST.
		writeErr := func(w http.ResponseWriter, status, code int, msg string) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			if isREST {
				reason, domain := map[int]string{401: "UNAUTHENTICATED", 403: "UNAUTHORIZED", 503: "AGENT_UNAVAILABLE"}[status], "a2a-protocol.org"
				if status == 503 {
					domain = "astralvessel"
				}
				_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": status, "status": "X", "message": msg,
					"details": []any{map[string]any{"@type": errorInfoType, "reason": reason, "domain": domain}}}})
				return
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": code, "message": msg}})
		}
		fv.mu.Lock()
		fv.hdrs = append(fv.hdrs, r.Header.Clone())
		fv.mu.Unlock()
		if r.ContentLength > 4000 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			_, _ = w.Write([]byte(`{"error": "request too large"}`))
			return
		}
		if r.Header.Get("Authorization") != "Bearer "+testKey || r.Header.Get("X-Vessel-User") == "" {
			writeErr(w, http.StatusUnauthorized, -32001, "missing or invalid key")
			return
		}
		switch agent {
		case "birds":
			if isREST {
				r.URL.Path = strings.TrimPrefix(r.URL.Path, "/agents/birds/v1")
				rest.ServeHTTP(w, r)
				return
			}
			rpc.ServeHTTP(w, r)
		case "secret":
			writeErr(w, http.StatusForbidden, -32003, "agent not granted")
		case "down":
			w.Header().Set("Retry-After", "5")
			writeErr(w, http.StatusServiceUnavailable, -32004, "sandbox not ready")
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(fv.srv.Close)
	fv.grpcAddr = startFakeGRPC(t, h)
	return fv
}

// startFakeGRPC serves h over gRPC behind the vessel's refusals.
func startFakeGRPC(t *testing.T, h a2asrv.RequestHandler) string {
	t.Helper()
	refuse := func(code codes.Code, reason, domain, msg string) error {
		st, _ := status.New(code, msg).WithDetails(&errdetails.ErrorInfo{Reason: reason, Domain: domain})
		return st.Err()
	}
	admit := func(ctx context.Context, req any) error {
		md, _ := metadata.FromIncomingContext(ctx)
		if strings.Join(md.Get("authorization"), "") != "Bearer "+testKey || len(md.Get("x-vessel-user")) == 0 {
			return refuse(codes.Unauthenticated, "UNAUTHENTICATED", a2a.ProtocolDomain, "missing or invalid key")
		}
		tenant := ""
		if t, ok := req.(interface{ GetTenant() string }); ok {
			tenant = t.GetTenant()
		}
		switch tenant {
		case "birds":
			return nil
		case "secret":
			return refuse(codes.PermissionDenied, "UNAUTHORIZED", a2a.ProtocolDomain, "agent not granted")
		case "down":
			return refuse(codes.Unavailable, "AGENT_UNAVAILABLE", ErrorDomain, "sandbox not ready")
		}
		return refuse(codes.NotFound, "AGENT_NOT_FOUND", ErrorDomain, "unknown agent")
	}
	gs := grpc.NewServer(grpc.MaxRecvMsgSize(4000),
		grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
			if err := admit(ctx, req); err != nil {
				return nil, err
			}
			return next(ctx, req)
		}),
		grpc.StreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, next grpc.StreamHandler) error {
			return next(srv, &admitStream{ServerStream: ss, admit: admit})
		}))
	a2agrpc.NewHandler(h).RegisterWith(gs)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = gs.Serve(ln) }()
	t.Cleanup(gs.Stop)
	return ln.Addr().String()
}

type admitStream struct {
	grpc.ServerStream
	admit func(context.Context, any) error
}

func (s *admitStream) RecvMsg(m any) error {
	if err := s.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	return s.admit(s.Context(), m)
}
