package a2aserver

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"go.uber.org/zap"

	"github.com/astraldeep/astralvessel-go/runtime/telemetry"
)

// TurnInfo is one turn on this replica as the operator sees it.
type TurnInfo struct {
	Task    string    `json:"task"`
	Context string    `json:"context"`
	Agent   string    `json:"agent"`
	Owner   string    `json:"owner"`
	Started time.Time `json:"started,omitzero"` // when the running stretch started; zero while paused
	State   string    `json:"state"`            // "working" or "input-required" (paused for approval)
}

// Turns lists the turns running or paused on this replica, by agent in
// deployment order, oldest first.
func (s *Server) Turns() []TurnInfo {
	var out []TurnInfo
	for _, id := range s.order {
		e := s.agents[id].exec
		var list []TurnInfo
		e.mu.Lock()
		for task, r := range e.running {
			list = append(list, TurnInfo{Task: task, Context: r.contextID, Agent: id, Owner: r.owner, Started: r.started, State: "working"})
		}
		for task, pt := range e.waiting {
			list = append(list, TurnInfo{Task: task, Context: pt.contextID, Agent: id, Owner: pt.owner, State: "input-required"})
		}
		e.mu.Unlock()
		slices.SortFunc(list, func(a, b TurnInfo) int {
			if c := a.Started.Compare(b.Started); c != 0 {
				return c
			}
			return strings.Compare(a.Task, b.Task)
		})
		out = append(out, list...)
	}
	return out
}

// ErrNoSuchTurn is CancelTurn's answer for a task not running here.
var ErrNoSuchTurn = errors.New("no such turn on this replica")

// CancelTurn cancels a turn running or paused on this replica, as its
// owner would (CancelTask through the agent's handler, behind the
// interceptors): the task ends canceled and its turn.finished says so.
func (s *Server) CancelTurn(ctx context.Context, taskID string) (*a2a.Task, error) {
	for _, t := range s.Turns() {
		if t.Task != taskID {
			continue
		}
		e := s.agents[t.Agent].exec
		if e.self == nil {
			return nil, errors.New("the agent has no handler")
		}
		cctx, cc := a2asrv.NewCallContext(ctx, nil)
		cc.User = a2asrv.NewAuthenticatedUser(t.Owner, nil)
		task, err := e.self.CancelTask(cctx, &a2a.CancelTaskRequest{ID: a2a.TaskID(taskID)})
		if err != nil {
			return nil, err
		}
		s.log.Info("turn cancelled by the operator", zap.String(telemetry.FieldAgent, t.Agent), zap.String(telemetry.FieldTask, taskID))
		return task, nil
	}
	return nil, ErrNoSuchTurn
}

// OperatorHandler serves the operator API (docs/operations.md): GET
// /v1/operator/turns lists this replica's turns, POST
// /v1/operator/turns/{task}/cancel cancels one. Every request must carry
// "Authorization: Bearer <token>"; token must not be empty.
func (s *Server) OperatorHandler(token string) (http.Handler, error) {
	if len(token) < 32 {
		return nil, errors.New("operator API: the token must be at least 32 characters")
	}
	want := sha256.Sum256([]byte(token))
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/operator/turns", func(w http.ResponseWriter, _ *http.Request) {
		turns := s.Turns()
		if turns == nil {
			turns = []TurnInfo{}
		}
		writeJSON(w, http.StatusOK, map[string]any{"turns": turns})
	})
	mux.HandleFunc("POST /v1/operator/turns/{task}/cancel", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), cancelWait+5*time.Second)
		defer cancel()
		task, err := s.CancelTurn(ctx, r.PathValue("task"))
		switch {
		case errors.Is(err, ErrNoSuchTurn):
			writeJSONError(w, http.StatusNotFound, err.Error())
		case err != nil:
			writeJSONError(w, http.StatusConflict, "cancel failed: "+err.Error())
		default:
			writeJSON(w, http.StatusOK, map[string]any{"task": task.ID, "state": task.Status.State.String()})
		}
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		sum := sha256.Sum256([]byte(got))
		if !ok || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="astralvessel-operator"`)
			writeJSONError(w, http.StatusUnauthorized, "operator token required")
			return
		}
		mux.ServeHTTP(w, r)
	}), nil
}
