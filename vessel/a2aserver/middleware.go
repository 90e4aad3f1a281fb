package a2aserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
	"go.uber.org/zap"

	"github.com/astraldeep/astralvessel-go/runtime/telemetry"

	"github.com/astraldeep/astralvessel-go/vessel/a2acompat"
	"github.com/astraldeep/astralvessel-go/vessel/approval"
	"github.com/astraldeep/astralvessel-go/vessel/auth"
)

// JSON-RPC codes of the vessel's own HTTP errors.
const (
	CodeUnauthenticated = -32001
	CodeForbidden       = -32003
	CodeUnavailable     = -32004
)

func writeRPCError(w http.ResponseWriter, status, code int, msg string) {
	writeJSON(w, status, map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": code, "message": msg}})
}

func unauthMessage(err error) string {
	msg := "missing or invalid credentials"
	if err != nil {
		// Our own errors carry a short reason after the sentinel.
		if _, reason, ok := strings.Cut(err.Error(), auth.ErrUnauthenticated.Error()+": "); ok && len(reason) < 200 {
			msg = reason
		}
	}
	return msg
}

// refuser answers one of the vessel's own refusals (status 400, 401, 403,
// 404, 408, 413, 429 or 503) in a binding's error shape.
type refuser func(w http.ResponseWriter, status int, msg string)

// rpcRefusal is the JSON-RPC shape: a JSON-RPC error for 401, 403, 429 and
// 503 (codes CodeUnauthenticated, CodeForbidden, CodeTooManyRequests,
// CodeUnavailable), a plain
// {"error": ...} for the body refusals, which come before any JSON-RPC is read.
func rpcRefusal(w http.ResponseWriter, status int, msg string) {
	switch status {
	case http.StatusUnauthorized:
		writeRPCError(w, status, CodeUnauthenticated, msg)
	case http.StatusForbidden:
		writeRPCError(w, status, CodeForbidden, msg)
	case http.StatusServiceUnavailable:
		writeRPCError(w, status, CodeUnavailable, msg)
	case http.StatusTooManyRequests:
		writeRPCError(w, status, CodeTooManyRequests, msg)
	default:
		writeJSONError(w, status, msg)
	}
}

// authFailed counts a refused authentication and logs its reason, once:
// the JWT verifier logs its own refusals (with issuer and kid), so those
// are only counted here. The caller gets unauthMessage's words, never the
// reason of a token's refusal.
func (s *Server) authFailed(r *http.Request, agentID string, err error) {
	reason := authReason(err)
	s.cfg.Metrics.authFailures.WithLabelValues(reason).Inc()
	noteFrom(r.Context()).setErr(reason, unauthMessage(err))
	if reason == AuthInvalidToken {
		return
	}
	s.log.Info("authentication failed", zap.String(telemetry.FieldAgent, agentID), zap.String("reason", reason),
		zap.String("remote", r.RemoteAddr), zap.Error(err))
}

// rpc is the JSON-RPC endpoint: our checks, then the SDK.
func (s *Server) rpc(w http.ResponseWriter, r *http.Request) {
	a := s.agents[r.PathValue("id")]
	if a == nil {
		writeJSONError(w, http.StatusNotFound, "unknown agent")
		return
	}
	if r.Method != http.MethodPost {
		// JSON-RPC is POST only; the endpoint serves no CORS preflight.
		a2acompat.MethodNotAllowed(w)
		return
	}
	r, done, ok := s.admit(w, r, a, rpcRefusal, rpcStarts)
	if !ok {
		return
	}
	defer done()
	a.rpc.ServeHTTP(w, r)
}

// refusal is one of the vessel's own refusals of a call, before the SDK
// sees it: an HTTP status (400, 401, 403, 408, 413, 429 or 503), the words
// for the caller and, for 429, the seconds to wait. Each binding answers it
// in its own shape (rpcRefusal, restRefusal, grpcStatus).
type refusal struct {
	status     int
	msg        string
	retryAfter int
}

// admitCall runs the checks every binding shares, in this order: the caller
// is authenticated, may call the agent, is within its app's request rate
// and its requests in flight (AdmitRequest), the agent is ready, body (the
// binding's own check of the request's size and arrival, nil when the
// transport did it) passes, what the call starts (starts: a turn, a
// stream) is within the caps (admitStarts), and the caller's tools are
// narrowed and approvals widened. It returns the context for the SDK (the
// principal, the turn's admission, the caller's tools and approval extras
// in it) and done, to call when the call ends. r carries the caller's
// headers (on gRPC, its metadata).
func (s *Server) admitCall(r *http.Request, a *agent, body func() *refusal, starts func() int) (context.Context, func(), *refusal) {
	p, err := s.cfg.Auth.Authenticate(r.Context(), r)
	if err != nil {
		s.authFailed(r, a.conf.ID, err)
		return nil, nil, &refusal{status: http.StatusUnauthorized, msg: unauthMessage(err)}
	}
	noteFrom(r.Context()).setPrincipal(p)
	if !p.MayCall(a.conf.ID) {
		return nil, nil, &refusal{status: http.StatusForbidden, msg: "you may not call this agent"}
	}
	endRequest, err := s.AdmitRequest(p, a.conf.ID)
	if err != nil {
		return nil, nil, tooMany(err)
	}
	ok := false
	defer func() {
		if !ok {
			endRequest()
		}
	}()
	if body != nil {
		if no := body(); no != nil {
			return nil, nil, no
		}
	}
	n := starts()
	if no := outOfService(a, n); no != nil {
		return nil, nil, no
	}
	n &^= readsOnly
	// A caller's traceparent (header or gRPC metadata) becomes the parent
	// of the turn's span.
	ctx := telemetry.ExtractHTTP(r.Context(), r.Header)
	ctx, endMethod, err := s.admitStarts(ctx, p, a.conf.ID, n)
	if err != nil {
		return nil, nil, tooMany(err)
	}
	if n > 0 {
		// A call that starts a turn narrows the tools as listed now: the
		// lists of MCP servers with tools = ["*"] are brought up to date
		// (a no-op while fresh; docs/mcp.md).
		a.exec.tools.Refresh(ctx)
	}
	defer func() {
		if !ok {
			endMethod()
		}
	}()
	if s.cfg.NarrowTools != nil || p.Scopes != nil {
		list, err := s.narrow(r, p, a)
		if err != nil {
			return nil, nil, &refusal{status: http.StatusForbidden, msg: err.Error()}
		}
		ctx = withTools(ctx, list)
	}
	if x, err := approvalExtra(a, p, r.Header.Values(approval.Header)); err != nil {
		return nil, nil, &refusal{status: http.StatusBadRequest, msg: err.Error()}
	} else if !x.Empty() {
		ctx = withExtra(ctx, x)
	}
	ok = true
	return auth.WithPrincipal(ctx, p), func() { endMethod(); endRequest() }, nil
}

// outOfService refuses a call to an agent out of service with 503 and the
// reason, unless the call only reads stored tasks (starts has readsOnly)
// and the vessel is not shutting down.
func outOfService(a *agent, starts int) *refusal {
	if a.ready.Load() {
		return nil
	}
	why, _ := a.why.Load().(string)
	if starts&readsOnly != 0 && why != ShuttingDown {
		return nil
	}
	return &refusal{status: http.StatusServiceUnavailable, msg: "the agent is not available: " + why}
}

// admit is admitCall for the HTTP bindings (JSON-RPC and HTTP+JSON): the
// body is read whole within the limit and the body timeout, what the
// request starts is read from it (starts), a refusal is answered with
// refuse and its HTTP headers. It returns the request to hand to the SDK,
// the Authorization header gone (the key or token must not reach the
// SDK's ServiceParams), and done, to call when the request ends.
func (s *Server) admit(w http.ResponseWriter, r *http.Request, a *agent, refuse refuser, starts func(r *http.Request) int) (*http.Request, func(), bool) {
	refuse = noting(r, refuse)
	ctx, done, no := s.admitCall(r, a, func() *refusal { return s.limitBody(w, r) }, func() int { return starts(r) })
	if no != nil {
		switch no.status {
		case http.StatusUnauthorized:
			w.Header().Set("WWW-Authenticate", `Bearer realm="astralvessel"`)
		case http.StatusServiceUnavailable:
			w.Header().Set("Retry-After", "5")
		case http.StatusTooManyRequests:
			w.Header().Set("Retry-After", strconv.Itoa(no.retryAfter))
		case http.StatusRequestEntityTooLarge, http.StatusRequestTimeout:
			w.Header().Set("Connection", "close")
		}
		refuse(w, no.status, no.msg)
		return nil, nil, false
	}
	r.Header.Del("Authorization")
	return r.WithContext(ctx), done, true
}

// limitBody reads the request body whole, within the body timeout, and
// refuses (413) bodies over the limit without reading them whole: a
// declared length is checked first, any body is read at most one byte past
// the limit. A caller that has not sent its body when the timeout passes
// gets 408. The read deadline is lifted once the body is in, so a
// streaming response is not cut by it.
func (s *Server) limitBody(w http.ResponseWriter, r *http.Request) *refusal {
	max := s.cfg.MaxBody
	if r.ContentLength > max {
		return tooLarge()
	}
	rc := http.NewResponseController(w)
	deadlineSet := rc.SetReadDeadline(time.Now().Add(s.cfg.BodyTimeout)) == nil
	body, err := readArrived(r.Body, r.ContentLength, max+1)
	if deadlineSet {
		_ = rc.SetReadDeadline(time.Time{})
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return &refusal{status: http.StatusRequestTimeout, msg: "the request body did not arrive in time"}
	}
	if err != nil {
		return &refusal{status: http.StatusBadRequest, msg: "could not read the request body"}
	}
	if int64(len(body)) > max {
		return tooLarge()
	}
	r.Body = a2acompat.NewReadBody(body)
	r.ContentLength = int64(len(body))
	return nil
}

// firstRead is the buffer a body starts with, whatever length it declares.
const firstRead = 4 << 10

// readArrived reads body, up to limit bytes, into a buffer that grows with
// what has arrived, never with what was declared: a caller may declare
// 16 MB and send a byte a minute, and hundreds of such callers must not pin
// gigabytes before sending anything. The buffer starts small and doubles
// when full, and jumps to the declared length (plus bytes.MinRead, to see
// the end without one more growth) once that is at most three times what
// has arrived: a request holds at most about three times the bytes it has
// sent, and a body of its declared length is copied about once more on
// its way in.
func readArrived(body io.Reader, declared, limit int64) ([]byte, error) {
	size := int64(firstRead)
	if declared > 0 {
		size = min(declared, firstRead) + bytes.MinRead
	}
	buf := make([]byte, 0, size)
	for {
		if len(buf) == cap(buf) {
			got := int64(len(buf))
			if got >= limit {
				return buf, nil // the caller refuses it as too large
			}
			next := 2 * got
			if whole := min(declared, limit) + bytes.MinRead; declared > got && whole <= 3*got {
				next = whole
			}
			grown := make([]byte, len(buf), min(next, limit+bytes.MinRead))
			copy(grown, buf)
			buf = grown
		}
		n, err := body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF || int64(len(buf)) >= limit {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

func tooLarge() *refusal {
	return &refusal{status: http.StatusRequestEntityTooLarge, msg: "request too large"}
}

// interceptor runs inside the SDK: it checks A2A-Version, binds the caller
// as the CallContext user (the task owner), and answers "task not found"
// for another owner's task before the SDK touches it.
type interceptor struct {
	a2asrv.PassthroughCallInterceptor
	store   taskstore.Store
	maxArgs int // the agent's max_tool_arguments_bytes, for edited arguments
	// push checks a SendMessage's push config before the SDK saves it (nil
	// when push is off): the SDK's own error for a refused save prints the
	// whole config into the caller's answer and the log.
	push *checkedPushConfigs
}

type acceptedKey struct{}

// cancelKey carries a CancelTask's task id from Before to After.
type cancelKey struct{}

// SupportedVersion reports whether an A2A-Version header is served: 1.0 or
// 1.0.x; an empty header is served as 1.0 (see docs/a2a.md).
func SupportedVersion(v string) bool {
	v = strings.TrimSpace(v)
	return v == "" || v == "1.0" || v == "1" || strings.HasPrefix(v, "1.0.")
}

func (i *interceptor) Before(ctx context.Context, cc *a2asrv.CallContext, req *a2asrv.Request) (context.Context, any, error) {
	ctx, v, err := i.before(ctx, cc, req)
	auditBefore(ctx, cc, req, err)
	return ctx, v, err
}

func (i *interceptor) before(ctx context.Context, cc *a2asrv.CallContext, req *a2asrv.Request) (context.Context, any, error) {
	if err := checkA2AVersion(cc); err != nil {
		return ctx, nil, err
	}
	p, ok := auth.PrincipalFrom(ctx)
	if !ok {
		return ctx, nil, a2a.NewError(a2a.ErrUnauthenticated, "unauthenticated")
	}
	cc.User = a2asrv.NewAuthenticatedUser(p.Owner, nil)
	ctx, id, err := i.requestTask(ctx, cc, req)
	if err != nil || id == "" {
		return ctx, nil, err
	}
	return i.againstTask(ctx, req, id)
}

// checkA2AVersion refuses a request whose A2A-Version this server does not
// speak.
func checkA2AVersion(cc *a2asrv.CallContext) error {
	if vs, ok := cc.ServiceParams().Get("A2A-Version"); ok && len(vs) > 0 {
		for _, v := range vs {
			if !SupportedVersion(v) {
				return a2a.NewError(a2a.ErrVersionNotSupported, "A2A version "+v+" is not supported; use 1.0")
			}
		}
	}
	return nil
}

// requestTask reads the task a request names, if any, checking a message's
// own fields on the way.
func (i *interceptor) requestTask(ctx context.Context, cc *a2asrv.CallContext, req *a2asrv.Request) (context.Context, a2a.TaskID, error) {
	switch pl := req.Payload.(type) {
	case *a2a.GetTaskRequest:
		return ctx, pl.ID, nil
	case *a2a.CancelTaskRequest:
		return context.WithValue(ctx, cancelKey{}, pl.ID), pl.ID, nil
	case *a2a.SubscribeToTaskRequest:
		return ctx, pl.ID, nil
	case *a2a.SendMessageRequest:
		return i.sendMessage(ctx, cc, pl)
	}
	return ctx, "", nil
}

// sendMessage checks a message's role, a decision's task, and its push
// config, and notes what the turn needs to know (accepted output modes,
// whether SendMessage collects the stream).
func (i *interceptor) sendMessage(ctx context.Context, cc *a2asrv.CallContext, pl *a2a.SendMessageRequest) (context.Context, a2a.TaskID, error) {
	var id a2a.TaskID
	if pl.Message != nil && pl.Message.TaskID == "" && approval.HasDecision(pl.Message) {
		return ctx, "", a2a.NewError(a2a.ErrInvalidParams, "an approval decision must name the paused task (message.taskId) and its contextId")
	}
	if pl.Message != nil {
		id = pl.Message.TaskID
		switch pl.Message.Role {
		case a2a.MessageRoleUser, a2a.MessageRoleAgent, a2a.MessageRoleUnspecified:
			// An unspecified role is the SDK's "role is required".
		default:
			return ctx, "", a2a.NewError(a2a.ErrInvalidParams, fmt.Sprintf("unknown message role %q: use ROLE_USER", truncate(string(pl.Message.Role), 64)))
		}
	}
	if pl.Config != nil {
		ctx = context.WithValue(ctx, acceptedKey{}, pl.Config.AcceptedOutputModes)
		if pl.Config.PushConfig != nil && i.push != nil {
			if err := i.push.check(ctx, pl.Config.PushConfig); err != nil {
				return ctx, "", a2a.NewError(a2a.ErrInvalidParams, "push notification config refused: "+err.Error())
			}
		}
	}
	if cc.Method() == "SendMessage" && (pl.Config == nil || !pl.Config.ReturnImmediately) {
		// The finished task SendMessage returns carries what the
		// stream would have delivered (After).
		ctx = context.WithValue(ctx, collectKey{}, &collector{})
	}
	return ctx, id, nil
}

// againstTask checks a request against the stored task it names: the task
// exists for this caller, a decision fits its pause, and the request makes
// sense in the task's state.
func (i *interceptor) againstTask(ctx context.Context, req *a2asrv.Request, id a2a.TaskID) (context.Context, any, error) {
	st, err := i.store.Get(ctx, id)
	if err != nil {
		if errors.Is(err, a2a.ErrTaskNotFound) {
			return ctx, nil, a2a.NewError(a2a.ErrTaskNotFound, "task not found")
		}
		return ctx, nil, a2a.NewError(a2a.ErrInternalError, "the task store failed")
	}
	if pl, ok := req.Payload.(*a2a.SendMessageRequest); ok && st.Task != nil {
		if err := checkDecision(ctx, st.Task, pl.Message, i.maxArgs); err != nil {
			return ctx, nil, err
		}
	}
	if st.Task == nil {
		return ctx, nil, nil
	}
	if _, ok := req.Payload.(*a2a.SubscribeToTaskRequest); ok && interrupted(st.Task.Status.State) {
		// A paused turn has no live execution to follow: the subscriber
		// gets the task as it stands (the pending request in its status
		// message) and the stream ends there, as a live stream ends when
		// the turn pauses.
		return ctx, a2a.SendMessageResult(st.Task), nil
	}
	if !st.Task.Status.State.Terminal() {
		return ctx, nil, nil
	}
	state := st.Task.Status.State.String()
	switch req.Payload.(type) {
	case *a2a.CancelTaskRequest:
		// Already canceled included: A2A 1.0 cancels only a task that runs.
		return ctx, nil, a2a.NewError(a2a.ErrTaskNotCancelable, "the task already ended ("+state+")")
	case *a2a.SubscribeToTaskRequest:
		return ctx, nil, a2a.NewError(a2a.ErrUnsupportedOperation, "the task already ended ("+state+"); read it with GetTask")
	}
	return ctx, nil, nil
}

// interrupted reports the states in which a task waits for its caller.
func interrupted(s a2a.TaskState) bool {
	return s == a2a.TaskStateInputRequired || s == a2a.TaskStateAuthRequired
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// After answers a CancelTask that lost the race with the turn's own end as
// the protocol says (the canceled task, or "not cancelable") rather than as
// an internal error: under load a cancel can arrive while the turn finishes.
func (i *interceptor) After(ctx context.Context, cc *a2asrv.CallContext, resp *a2asrv.Response) error {
	err := i.after(ctx, cc, resp)
	auditAfter(ctx, resp)
	return err
}

func (i *interceptor) after(ctx context.Context, _ *a2asrv.CallContext, resp *a2asrv.Response) error {
	if c, ok := ctx.Value(collectKey{}).(*collector); ok && resp.Err == nil {
		if t, ok := resp.Payload.(*a2a.Task); ok && t != nil {
			resp.Payload = c.into(t)
		}
		return nil
	}
	id, ok := ctx.Value(cancelKey{}).(a2a.TaskID)
	if !ok || resp.Err == nil || errors.Is(resp.Err, a2a.ErrTaskNotFound) || errors.Is(resp.Err, a2a.ErrTaskNotCancelable) {
		return nil
	}
	st, err := i.store.Get(ctx, id)
	if err != nil || st.Task == nil || !st.Task.Status.State.Terminal() {
		return nil
	}
	if st.Task.Status.State == a2a.TaskStateCanceled {
		resp.Payload, resp.Err = st.Task, nil
		return nil
	}
	resp.Err = a2a.NewError(a2a.ErrTaskNotCancelable, "the task already ended ("+st.Task.Status.State.String()+")")
	return nil
}

// acceptedModes returns the request's acceptedOutputModes.
func acceptedModes(ctx context.Context) []string {
	m, _ := ctx.Value(acceptedKey{}).([]string)
	return m
}

// collectKey carries a SendMessage's collector from Before to the executor
// and After.
type collectKey struct{}

// collector gathers the artifacts a turn emitted, merged as a client of the
// stream merges them (appended chunks join their artifact's parts), so that
// SendMessage answers with the transcript and files the stream delivers,
// which the stored task never keeps.
type collector struct {
	mu   sync.Mutex
	task a2a.TaskID
	arts []*a2a.Artifact
}

func (c *collector) add(ev *a2a.TaskArtifactUpdateEvent) {
	if ev == nil || ev.Artifact == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.task = ev.TaskID
	if ev.Append {
		for _, a := range c.arts {
			if a.ID == ev.Artifact.ID {
				a.Parts = append(a.Parts, ev.Artifact.Parts...)
				return
			}
		}
	}
	a := *ev.Artifact
	a.Parts = slices.Clone(ev.Artifact.Parts)
	c.arts = append(c.arts, &a)
}

// into returns t with the collected artifacts in the order they were
// emitted, when they belong to t; t itself is not modified.
func (c *collector) into(t *a2a.Task) *a2a.Task {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.arts) == 0 || c.task != t.ID {
		return t
	}
	out := *t
	out.Artifacts = slices.Clone(c.arts)
	return &out
}

// collectArtifact records an emitted artifact for the SendMessage answer.
func collectArtifact(ctx context.Context, ev *a2a.TaskArtifactUpdateEvent) {
	if c, ok := ctx.Value(collectKey{}).(*collector); ok {
		c.add(ev)
	}
}
