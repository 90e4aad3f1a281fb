// Checks of task management: cancel and listing.

package suite

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

func checkCancel(ctx context.Context, e *env, r *reporter) {
	other := auth{key: e.cfg.Key, user: e.cfg.OtherUser}
	type side struct {
		subscribe, otherGet, otherCancel, cancel error
		list, listWorking                        error
		subSkip                                  string
		cancelState                              string
	}
	var s side
	var wg sync.WaitGroup
	fired := false
	onWorking := func(taskID string) {
		fired = true
		wg.Add(1)
		go func() {
			defer wg.Done()
			// SubscribeToTask, if supported: the first frame is the task.
			_, frames, err := e.stream(ctx, e.cfg.Agent, "SubscribeToTask", obj{"id": taskID}, e.me, func(frame) bool { return false })
			switch {
			case err != nil:
				s.subscribe = err
			case len(frames) == 0:
				s.subscribe = errors.New("no frame")
			case frames[0].kind == "error":
				code, _ := frames[0].body["code"].(float64)
				if int(code) == -32004 || int(code) == -32601 {
					s.subSkip = fmt.Sprintf("not supported (%d)", int(code))
				} else {
					s.subscribe = fmt.Errorf("error %d %s", int(code), getStr(frames[0].body, "message"))
				}
			case frames[0].kind != "task" || getStr(frames[0].body, "id") != taskID:
				s.subscribe = fmt.Errorf("first frame is %s, want the task", frames[0].kind)
			}
			s.list, s.listWorking = listShowsWorking(ctx, e, taskID)
			s.otherGet = e.wantNotFound(e.rpc(ctx, e.cfg.Agent, "GetTask", obj{"id": taskID}, other, nil))
			s.otherCancel = e.wantNotFound(e.rpc(ctx, e.cfg.Agent, "CancelTask", obj{"id": taskID}, other, nil))
			status, m, err := e.rpc(ctx, e.cfg.Agent, "CancelTask", obj{"id": taskID}, e.me, nil)
			if err == nil {
				if code, msg, isErr := rpcError(m); isErr || status != 200 {
					err = fmt.Errorf("HTTP %d, error %d %s", status, code, msg)
				}
				s.cancelState = getStr(getObj(m, "result", "status"), "state")
			}
			s.cancel = err
		}()
	}
	t, err := e.streamTurn(ctx, sendParams(e.message("", textPart(e.cfg.SlowText)), true), e.me, onWorking)
	wg.Wait()
	if t.taskID == "" || !fired {
		why := fmt.Sprintf("no task: %v", err)
		if t.taskID != "" {
			why = fmt.Sprintf("the turn (final state %s) never reported a working status: %v", t.finalState, err)
		}
		for _, name := range []string{"subscribe: task snapshot first", "tasks: ListTasks shows the running state",
			"tasks: ListTasks filters on TASK_STATE_WORKING", "owner: other user cannot read a running task",
			"owner: other user cannot cancel", "cancel: CancelTask answers CANCELED",
			"cancel: stream ends with turn.finished cancelled", "cancel: GetTask shows CANCELED", "cancel: a canceled task is not cancelable"} {
			r.fail(name, "%s", why)
		}
		return
	}
	switch {
	case s.subSkip != "":
		r.skip("subscribe: task snapshot first", "%s", s.subSkip)
	default:
		r.check("subscribe: task snapshot first", s.subscribe, "SubscribeToTask starts with the task")
	}
	r.check("tasks: ListTasks shows the running state", s.list, "the running task is listed in "+stateWorking)
	r.check("tasks: ListTasks filters on TASK_STATE_WORKING", s.listWorking, "status="+stateWorking+" finds it")
	r.check("owner: other user cannot read a running task", s.otherGet, "GetTask → task not found")
	r.check("owner: other user cannot cancel", s.otherCancel, "CancelTask → task not found")
	if s.cancel == nil && s.cancelState != stateCanceled {
		s.cancel = fmt.Errorf("CancelTask returned state %s, want %s", s.cancelState, stateCanceled)
	}
	r.check("cancel: CancelTask answers CANCELED", s.cancel, stateCanceled)
	if err == nil && (t.finalState != stateCanceled || getStr(t.finished, "status") != "cancelled") {
		err = fmt.Errorf("final state %s, turn.finished status %q; want %s / cancelled", t.finalState, getStr(t.finished, "status"), stateCanceled)
		if t.finalState == stateCompleted {
			err = fmt.Errorf("%w (the turn finished before it was cancelled: does the model honour %q?)", err, e.cfg.SlowText)
		}
	}
	r.check("cancel: stream ends with turn.finished cancelled", err, stateCanceled+" / cancelled")

	status, m, err := e.rpc(ctx, e.cfg.Agent, "GetTask", obj{"id": t.taskID}, e.me, nil)
	if err == nil {
		if st := getStr(getObj(m, "result", "status"), "state"); status != 200 || st != stateCanceled {
			err = fmt.Errorf("HTTP %d, state %q", status, st)
		}
	}
	r.check("cancel: GetTask shows CANCELED", err, stateCanceled)

	status, m, err = e.rpc(ctx, e.cfg.Agent, "CancelTask", obj{"id": t.taskID}, e.me, nil)
	if err == nil {
		if code, msg, isErr := rpcError(m); !isErr || code != -32002 || status != e.errorStatus(-32002) {
			err = fmt.Errorf("HTTP %d, code %d %q; want %d / -32002", status, code, msg, e.errorStatus(-32002))
		}
	}
	r.check("cancel: a canceled task is not cancelable", err, "a second CancelTask → -32002")
}

// listShowsWorking checks ListTasks while taskID runs: listed in WORKING,
// and found by the status filter.
func listShowsWorking(ctx context.Context, e *env, taskID string) (listed, filtered error) {
	find := func(params obj) (string, error) {
		status, m, err := e.rpc(ctx, e.cfg.Agent, "ListTasks", params, e.me, nil)
		if err != nil {
			return "", err
		}
		if code, msg, isErr := rpcError(m); isErr || status != 200 {
			return "", fmt.Errorf("HTTP %d, error %d %s", status, code, msg)
		}
		for _, t := range getList(getObj(m, "result"), "tasks") {
			if to, ok := t.(map[string]any); ok && getStr(to, "id") == taskID {
				return getStr(getObj(to, "status"), "state"), nil
			}
		}
		return "", nil
	}
	state, err := find(obj{"pageSize": 100})
	switch {
	case err != nil:
		listed = err
	case state == "":
		listed = fmt.Errorf("the running task is not listed")
	case state != stateWorking:
		listed = fmt.Errorf("listed in %s while it runs, want %s", state, stateWorking)
	}
	state, err = find(obj{"status": stateWorking, "pageSize": 100})
	switch {
	case err != nil:
		filtered = err
	case state == "":
		filtered = fmt.Errorf("status=%s does not find the running task", stateWorking)
	}
	return listed, filtered
}

// wantNotFound checks an rpc answer is the task-not-found error.
func (e *env) wantNotFound(status int, m obj, err error) error {
	if err != nil {
		return err
	}
	code, msg, isErr := rpcError(m)
	if !isErr {
		return fmt.Errorf("HTTP %d, a result instead of task not found: %s", status, snippet(mustJSON(m)))
	}
	if want := e.errorStatus(-32001); status != want || code != -32001 {
		return fmt.Errorf("HTTP %d, code %d %q; want %d / -32001", status, code, msg, want)
	}
	return nil
}

func checkTasks(ctx context.Context, e *env, r *reporter) {
	if e.done == nil || e.done.taskID == "" {
		r.skip("tasks: GetTask after finish", "no finished task from the streaming check")
	} else {
		id := e.done.taskID
		status, m, err := e.rpc(ctx, e.cfg.Agent, "GetTask", obj{"id": id}, e.me, nil)
		if err == nil {
			task := getObj(m, "result")
			st := getStr(getObj(task, "status"), "state")
			got, _ := markdown(answerOf(task))
			want, _ := markdown(e.done.answer)
			switch {
			case status != 200 || st != stateCompleted:
				err = fmt.Errorf("HTTP %d, state %q", status, st)
			case got != want:
				err = fmt.Errorf("stored answer (%d bytes) differs from the streamed one (%d bytes)", len(got), len(want))
			}
		}
		r.check("tasks: GetTask after finish", err, "COMPLETED, answer kept")

		other := auth{key: e.cfg.Key, user: e.cfg.OtherUser}
		r.check("owner: other user cannot read a finished task", e.wantNotFound(e.rpc(ctx, e.cfg.Agent, "GetTask", obj{"id": id}, other, nil)), "task not found")

		status, m, err = e.rpc(ctx, e.cfg.Agent, "CancelTask", obj{"id": id}, e.me, nil)
		if err == nil {
			if code, _, isErr := rpcError(m); !isErr || code != -32002 || status != e.errorStatus(-32002) {
				err = fmt.Errorf("HTTP %d, code %d; want %d / -32002", status, code, e.errorStatus(-32002))
			}
		}
		r.check("tasks: cancel a finished task", err, "-32002 not cancelable")

		methods := []string{"SubscribeToTask", "tasks/resubscribe"}
		if e.rest() || e.grpcMode() {
			methods = methods[:1] // the 0.3 name is JSON-RPC only
		}
		for _, method := range methods {
			code, err := e.subscribeCode(ctx, method, id)
			if err == nil && code != -32004 {
				err = fmt.Errorf("code %d, want -32004", code)
			}
			r.check("subscribe: "+method+" on a finished task", err, "-32004 unsupported operation")
		}
		code, err := e.subscribeCode(ctx, "SubscribeToTask", e.run+"-no-such-task")
		if err == nil && code != -32001 {
			err = fmt.Errorf("code %d, want -32001", code)
		}
		r.check("subscribe: SubscribeToTask on an unknown task", err, "-32001 task not found")
	}
	r.check("tasks: unknown task", e.wantNotFound(e.rpc(ctx, e.cfg.Agent, "GetTask", obj{"id": e.run + "-no-such-task"}, e.me, nil)), "-32001")
}
