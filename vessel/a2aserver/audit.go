package a2aserver

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"go.uber.org/zap"

	"github.com/astraldeep/astralvessel-go/runtime/audit"
	"github.com/astraldeep/astralvessel-go/runtime/statuswriter"
	"github.com/astraldeep/astralvessel-go/vessel/auth"
)

// auditNote gathers what one A2A call did, for its API Activity event:
// the admission checks, the interceptor and the executor fill it in as the
// call goes (a turn may run on after the request returned, hence the lock).
type auditNote struct {
	mu         sync.Mutex
	op         string
	task       string
	owner, app string
	err, code  string
	// continued: a SendMessage that named an existing task.
	continued bool
	// agent is the agent a gRPC call named (its tenant); the HTTP
	// bindings' is in the path.
	agent string
}

type auditKey struct{}

func noteFrom(ctx context.Context) *auditNote {
	n, _ := ctx.Value(auditKey{}).(*auditNote)
	return n
}

func (n *auditNote) setPrincipal(p *auth.Principal) {
	if n == nil || p == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.owner, n.app = p.Owner, p.AppID
	if n.app == "" {
		n.app = p.IssuerID
	}
}

func (n *auditNote) setOp(op string) {
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.op == "" {
		n.op = op
	}
}

func (n *auditNote) setTask(id a2a.TaskID) {
	if n == nil || id == "" {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.task == "" {
		n.task = string(id)
	}
}

// setErr keeps the first error of the call.
func (n *auditNote) setErr(code, msg string) {
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.err == "" {
		n.err, n.code = msg, code
	}
}

func (n *auditNote) setA2AErr(err error) {
	if err == nil {
		return
	}
	msg := err.Error()
	var ae *a2a.Error
	if errors.As(err, &ae) && ae.Message != "" {
		msg = ae.Message
	}
	n.setErr(a2a.ErrorReason(err), truncate(msg, 300))
}

// apiActivity is the OCSF activity of an A2A method.
func apiActivity(op string, continued bool) int {
	switch op {
	case "SendMessage", "SendStreamingMessage":
		if continued {
			return audit.APIUpdate
		}
		return audit.APICreate
	case "CreateTaskPushNotificationConfig":
		return audit.APICreate
	case "GetTask", "ListTasks", "SubscribeToTask", "GetTaskPushNotificationConfig", "ListTaskPushNotificationConfigs", "GetExtendedAgentCard":
		return audit.APIRead
	case "CancelTask":
		return audit.APIUpdate
	case "DeleteTaskPushNotificationConfig":
		return audit.APIDelete
	}
	return audit.APIOther
}

// audited wraps an A2A endpoint (JSON-RPC or REST) so each call, refused
// or served, writes one API Activity event when the handler returns.
func (s *Server) audited(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.Audit == nil {
			h(w, r)
			return
		}
		start := time.Now()
		n := &auditNote{}
		aw := statuswriter.New(w)
		h(aw, r.WithContext(context.WithValue(r.Context(), auditKey{}, n)))
		status := aw.Code()
		s.emitAPICall(n, &audit.APICall{Start: start, Remote: r.RemoteAddr, HTTPMethod: r.Method, Path: r.URL.Path,
			UserAgent: truncate(r.UserAgent(), 200), Agent: r.PathValue("id"), HTTPStatus: status})
	}
}

// emitAPICall completes c from the call's note and writes its event.
func (s *Server) emitAPICall(n *auditNote, c *audit.APICall) {
	n.mu.Lock()
	c.End, c.Operation, c.Owner, c.App, c.Task, c.Error, c.ErrorCode = time.Now(), n.op, n.owner, n.app, n.task, n.err, n.code
	if c.Agent == "" {
		c.Agent = n.agent
	}
	continued := n.continued
	n.mu.Unlock()
	if c.Operation == "" {
		c.Operation = "unknown"
	}
	c.ActivityID = apiActivity(c.Operation, continued)
	if c.HTTPStatus >= 400 && c.Error == "" {
		c.Error, c.ErrorCode = http.StatusText(c.HTTPStatus), http.StatusText(c.HTTPStatus)
	}
	if err := s.cfg.Audit.Emit(audit.APIActivity(c)); err != nil {
		s.log.Warn("audit event not written", zap.Error(err))
	}
}

// noting is refuse, noting the refusal for the call's audit event.
func noting(r *http.Request, refuse refuser) refuser {
	n := noteFrom(r.Context())
	if n == nil {
		return refuse
	}
	return func(w http.ResponseWriter, status int, msg string) {
		n.setErr(http.StatusText(status), msg)
		refuse(w, status, msg)
	}
}

// auditBefore notes the method and task of a call the SDK is about to
// handle, and the interceptor's refusal if any.
func auditBefore(ctx context.Context, cc *a2asrv.CallContext, req *a2asrv.Request, err error) {
	n := noteFrom(ctx)
	if n == nil {
		return
	}
	n.setOp(cc.Method())
	switch pl := req.Payload.(type) {
	case *a2a.GetTaskRequest:
		n.setTask(pl.ID)
	case *a2a.CancelTaskRequest:
		n.setTask(pl.ID)
	case *a2a.SubscribeToTaskRequest:
		n.setTask(pl.ID)
	case *a2a.SendMessageRequest:
		if pl.Message != nil && pl.Message.TaskID != "" {
			n.setTask(pl.Message.TaskID)
			n.mu.Lock()
			n.continued = true
			n.mu.Unlock()
		}
	}
	n.setA2AErr(err)
}

// auditAfter notes the task an answer names and the call's error.
func auditAfter(ctx context.Context, resp *a2asrv.Response) {
	n := noteFrom(ctx)
	if n == nil {
		return
	}
	// A typed nil (the SDK answers an error with a nil *Task) names nothing.
	switch ev := resp.Payload.(type) {
	case *a2a.Task:
		if ev != nil {
			n.setTask(ev.ID)
		}
	case *a2a.TaskStatusUpdateEvent:
		if ev != nil {
			n.setTask(ev.TaskID)
		}
	case *a2a.TaskArtifactUpdateEvent:
		if ev != nil {
			n.setTask(ev.TaskID)
		}
	case *a2a.Message:
		if ev != nil {
			n.setTask(ev.TaskID)
		}
	}
	n.setA2AErr(resp.Err)
}
