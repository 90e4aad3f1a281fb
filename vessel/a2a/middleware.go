package a2aserver

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"

	"github.com/astraldeep/astralvessel-go/vessel/a2acompat"
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
	p, err := s.cfg.Auth.Authenticate(r.Context(), r)
	if err != nil {
		w.Header().Set("WWW-Authenticate", `Bearer realm="astralvessel"`)
		writeRPCError(w, http.StatusUnauthorized, CodeUnauthenticated, unauthMessage(err))
		return
	}
	if !p.MayCall(a.spec.ID) {
		writeRPCError(w, http.StatusForbidden, CodeForbidden, "you may not call this agent")
		return
	}
	if !a.ready.Load() {
		why, _ := a.why.Load().(string)
		w.Header().Set("Retry-After", "5")
		writeRPCError(w, http.StatusServiceUnavailable, CodeUnavailable, "the agent is not available: "+why)
		return
	}
	if !s.limitBody(w, r) {
		return
	}
	if s.cfg.NarrowTools != nil || p.Scopes != nil {
		list, err := s.narrow(r, p, a)
		if err != nil {
			writeRPCError(w, http.StatusForbidden, CodeForbidden, err.Error())
			return
		}
		r = r.WithContext(withTools(r.Context(), list))
	}
	// The key or token must not reach the SDK's ServiceParams.
	r.Header.Del("Authorization")
	r = r.WithContext(auth.WithPrincipal(r.Context(), p))
	a.rpc.ServeHTTP(w, r)
}

// limitBody answers 413 for bodies over the limit without reading them
// whole: a declared length is checked first, a chunked body is read at
// most one byte past the limit.
func (s *Server) limitBody(w http.ResponseWriter, r *http.Request) bool {
	max := s.cfg.MaxBody
	if r.ContentLength > max {
		tooLarge(w)
		return false
	}
	if r.ContentLength >= 0 {
		r.Body = http.MaxBytesReader(w, r.Body, max)
		return true
	}
	buf, err := io.ReadAll(io.LimitReader(r.Body, max+1))
	if err != nil {
		writeJSONError(w, http.StatusBadRequest, "could not read the request body")
		return false
	}
	if int64(len(buf)) > max {
		tooLarge(w)
		return false
	}
	r.Body = io.NopCloser(bytes.NewReader(buf))
	r.ContentLength = int64(len(buf))
	return true
}

func tooLarge(w http.ResponseWriter) {
	w.Header().Set("Connection", "close")
	writeJSONError(w, http.StatusRequestEntityTooLarge, "request too large")
}

// interceptor runs inside the SDK: it checks A2A-Version, binds the caller
// as the CallContext user (the task owner), and answers "task not found"
// for another owner's task before the SDK touches it.
type interceptor struct {
	a2asrv.PassthroughCallInterceptor
	store taskstore.Store
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
	if vs, ok := cc.ServiceParams().Get("A2A-Version"); ok && len(vs) > 0 {
		for _, v := range vs {
			if !SupportedVersion(v) {
				return ctx, nil, a2a.NewError(a2a.ErrVersionNotSupported, "A2A version "+v+" is not supported; use 1.0")
			}
		}
	}
	p, ok := auth.PrincipalFrom(ctx)
	if !ok {
		return ctx, nil, a2a.NewError(a2a.ErrUnauthenticated, "unauthenticated")
	}
	cc.User = a2asrv.NewAuthenticatedUser(p.Owner, nil)
	var id a2a.TaskID
	switch pl := req.Payload.(type) {
	case *a2a.GetTaskRequest:
		id = pl.ID
	case *a2a.CancelTaskRequest:
		id = pl.ID
		ctx = context.WithValue(ctx, cancelKey{}, pl.ID)
	case *a2a.SubscribeToTaskRequest:
		id = pl.ID
	case *a2a.SendMessageRequest:
		if pl.Message != nil {
			id = pl.Message.TaskID
		}
		if pl.Config != nil {
			ctx = context.WithValue(ctx, acceptedKey{}, pl.Config.AcceptedOutputModes)
		}
	}
	if id != "" {
		if _, err := i.store.Get(ctx, id); err != nil {
			if errors.Is(err, a2a.ErrTaskNotFound) {
				return ctx, nil, a2a.NewError(a2a.ErrTaskNotFound, "task not found")
			}
			return ctx, nil, a2a.NewError(a2a.ErrInternalError, "the task store failed")
		}
	}
	return ctx, nil, nil
}

// After answers a CancelTask that lost the race with the turn's own end as
// the protocol says (the canceled task, or "not cancelable") rather than as
// an internal error: under load a cancel can arrive while the turn finishes.
func (i *interceptor) After(ctx context.Context, _ *a2asrv.CallContext, resp *a2asrv.Response) error {
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
