// Package load drives vessels through the public client: many users, each
// running turns one after another, every turn sending a long history,
// running one confined shell command and streaming many text pieces, some
// turns cancelled mid-stream. It records what each turn did and how long it
// took.
package load

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/astraldeep/astralvessel-go/vessel/client"
)

// Script rule names, selected by a "#script:<name>" marker in the user text.
const (
	ruleTurn   = "load"
	ruleCancel = "load-slow"
	// toolMarker is what the shell command prints; a turn checks for it.
	toolMarker = "load-ok"
)

// Config is one load run.
type Config struct {
	Users   int
	Turns   int
	History int // messages of history sent with every turn
	Cancels int // turns cancelled mid-stream
	Pieces  int // text pieces streamed per turn
	// Endpoints are the vessel base URLs; users are spread over them, and a
	// cancel goes to the next replica after the one streaming the turn.
	Endpoints []string
	Agent     string
	AppKey    string
	// TurnTimeout bounds one turn (a stuck turn fails instead of hanging).
	TurnTimeout time.Duration
	Log         io.Writer
}

// Script returns the scripted model's script for a run: a turn asks for one
// shell command, then streams the answer in pieces; a cancel turn streams
// slowly so the cancel lands mid-stream.
func Script(pieces int) []byte { return ScriptHold(pieces, 0) }

// ScriptHold is Script with the shell command kept alive for hold first
// (a sleep), so that runs beside each other have calls alive when the other
// ends its turns: a sweep that reached them would show as a tool ended by a
// signal (Turn.ToolSignal).
func ScriptHold(pieces int, hold time.Duration) []byte {
	if pieces < 1 {
		pieces = 1
	}
	text := answerText(pieces)
	slowDelay := 3000 / pieces // about 3 s of streaming
	if slowDelay < 2 {
		slowDelay = 2
	}
	command := "echo " + toolMarker + " > note.txt && cat note.txt"
	if hold > 0 {
		command = fmt.Sprintf("sleep %.3f && %s", hold.Seconds(), command)
	}
	tool := map[string]any{"name": "bash", "arguments": map[string]any{"command": command}}
	s := map[string]any{"rules": []any{
		map[string]any{"name": ruleTurn, "match": map[string]any{"contains": "#script:" + ruleTurn + " "}, "steps": []any{
			map[string]any{"tool_calls": []any{tool}},
			map[string]any{"text": text, "pieces": pieces},
		}},
		map[string]any{"name": ruleCancel, "match": map[string]any{"contains": "#script:" + ruleCancel + " "}, "steps": []any{
			map[string]any{"tool_calls": []any{tool}},
			map[string]any{"text": text, "pieces": pieces, "piece_delay_ms": slowDelay},
		}},
	}}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		// Only maps of strings and ints: marshalling cannot fail.
		return nil
	}
	return b
}

// SlowTurnText is a user message whose turn streams for about 20 s (tests
// use it to have a turn in flight).
const SlowTurnText = "#script:" + ruleCancel + " keep this turn streaming"

// answerText is what the model streams: at least one character per piece.
func answerText(pieces int) string { return strings.Repeat("ok ", max(pieces, 1)) }

// Turn is what one turn did.
type Turn struct {
	User       int           `json:"user"`
	Index      int           `json:"turn"`
	Replica    int           `json:"replica"`
	Cancel     bool          `json:"cancel"`
	OK         bool          `json:"ok"`
	Error      string        `json:"error,omitempty"`
	State      string        `json:"state,omitempty"`
	Status     string        `json:"status,omitempty"`
	Duration   time.Duration `json:"duration_ns"`
	FirstEvent time.Duration `json:"first_event_ns"`
	FirstText  time.Duration `json:"first_text_ns"`
	Pieces     int           `json:"pieces"`     // text.delta events (the vessel merges pieces)
	TextBytes  int           `json:"text_bytes"` // streamed text received
	// LateCancel: the cancel reached the vessel after the turn had completed
	// (refused as not cancelable); the turn is judged as a completed one.
	LateCancel bool `json:"late_cancel,omitempty"`
	// CancelError is what CancelTask answered, when it failed.
	CancelError string `json:"cancel_error,omitempty"`
	// CancelToEnd is from sending CancelTask to the turn's stream ending.
	CancelToEnd time.Duration `json:"cancel_to_end_ns,omitempty"`
	ToolOK      bool          `json:"tool_ok"`
	// ToolSignal names the signal that ended the turn's shell command
	// (the load never asks for one: a cancel lands after the command).
	ToolSignal string `json:"tool_signal,omitempty"`
}

// toolSignal names the signal that ended a failed call: from its note,
// else from a shell-style exit code above 128.
func toolSignal(e client.ToolFinished) string {
	if m := signalNote.FindStringSubmatch(e.Preview + " " + e.Error); m != nil {
		return m[1]
	}
	if e.ExitCode != nil && *e.ExitCode > 128 && *e.ExitCode < 128+65 {
		return fmt.Sprintf("signal %d", *e.ExitCode-128)
	}
	return ""
}

// signalNote finds the signal in a failed call's note, "[exit code 137 (SIGKILL)]".
var signalNote = regexp.MustCompile(`exit code -?\d+ \((SIG[A-Z0-9+-]+)\)`)

// History builds n alternating user/assistant messages of ordinary length.
func History(n int) []client.Message {
	msgs := make([]client.Message, 0, n)
	for i := range n {
		if i%2 == 0 {
			msgs = append(msgs, client.UserMessage(fmt.Sprintf("Earlier question %d: which of the birds in the guide nest near water, and when?", i/2)))
		} else {
			msgs = append(msgs, client.AssistantMessage(fmt.Sprintf("Earlier answer %d: herons and kingfishers nest near water, mostly in spring; grebes too.", i/2)))
		}
	}
	// A history must end with the assistant before the next user turn.
	if n > 0 && n%2 == 1 {
		msgs = msgs[:n-1]
	}
	return msgs
}

// cancelSet picks which (user, turn) pairs are cancelled, spread evenly.
func cancelSet(users, turns, cancels int) map[[2]int]bool {
	total := users * turns
	if cancels > total {
		cancels = total
	}
	set := map[[2]int]bool{}
	for i := range cancels {
		k := i * total / cancels
		set[[2]int{k % users, (k / users) % turns}] = true
	}
	return set
}

// Run drives the users and returns every turn, in no particular order.
func Run(ctx context.Context, cfg Config) ([]Turn, error) {
	if cfg.Users < 1 || cfg.Turns < 1 || len(cfg.Endpoints) == 0 {
		return nil, errors.New("load: need at least one user, one turn and one endpoint")
	}
	if cfg.TurnTimeout <= 0 {
		cfg.TurnTimeout = 5 * time.Minute
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	hc := &http.Client{Transport: &http.Transport{
		MaxIdleConns:        4 * cfg.Users,
		MaxIdleConnsPerHost: 2 * cfg.Users,
		IdleConnTimeout:     time.Minute,
	}}
	history := History(cfg.History)
	cancels := cancelSet(cfg.Users, cfg.Turns, cfg.Cancels)

	var mu sync.Mutex
	var turns []Turn
	var wg sync.WaitGroup
	for u := range cfg.Users {
		wg.Add(1)
		go func() {
			defer wg.Done()
			user := fmt.Sprintf("load-user-%d", u)
			replica := u % len(cfg.Endpoints)
			mk := func(r int) (*client.Client, error) {
				return client.New(cfg.Endpoints[r], cfg.Agent, client.Options{AppKey: cfg.AppKey, User: user, HTTPClient: hc})
			}
			cl, err := mk(replica)
			var other *client.Client
			if err == nil {
				other, err = mk((replica + 1) % len(cfg.Endpoints))
			}
			for t := range cfg.Turns {
				var res Turn
				if err != nil {
					res = Turn{User: u, Index: t, Replica: replica, Error: err.Error()}
				} else {
					res = runTurn(ctx, cfg, cl, other, history, u, t, replica, cancels[[2]int{u, t}])
				}
				mu.Lock()
				turns = append(turns, res)
				mu.Unlock()
				if !res.OK {
					fmt.Fprintf(cfg.Log, "load: user %d turn %d failed: %s\n", u, t, res.Error)
				}
			}
		}()
	}
	wg.Wait()
	return turns, ctx.Err()
}

// runTurn streams one turn and checks it: a normal turn must complete with
// the shell command's output seen and text streamed; a cancel turn must end
// cancelled.
func runTurn(ctx context.Context, cfg Config, cl, canceler *client.Client, history []client.Message, u, t, replica int, cancel bool) Turn {
	res := Turn{User: u, Index: t, Replica: replica, Cancel: cancel}
	ctx, stop := context.WithTimeout(ctx, cfg.TurnTimeout)
	defer stop()

	rule := ruleTurn
	if cancel {
		rule = ruleCancel
	}
	req := client.TurnRequest{
		Text:         fmt.Sprintf("#script:%s user %d turn %d: run the note command, then answer.", rule, u, t),
		History:      history,
		ContextID:    fmt.Sprintf("load-%d", u),
		NoTranscript: false,
	}
	start := time.Now()
	stream := cl.Turn(ctx, req)
	var streamErr error
	cancelDone := make(chan error, 1)
	cancelSent := false
	var cancelAt time.Time
	for ev, err := range stream.Events() {
		if err != nil {
			streamErr = err
			break
		}
		if res.FirstEvent == 0 {
			res.FirstEvent = time.Since(start)
		}
		switch e := ev.(type) {
		case client.TextDelta:
			res.Pieces++
			res.TextBytes += len(e.Text)
			if res.FirstText == 0 {
				res.FirstText = time.Since(start)
			}
			if cancel && !cancelSent && stream.TaskID() != "" {
				cancelSent = true
				cancelAt = time.Now()
				go func(id string) {
					_, err := canceler.Cancel(ctx, id)
					cancelDone <- err
				}(stream.TaskID())
			}
		case client.ToolFinished:
			if e.OK && strings.Contains(e.Preview, toolMarker) {
				res.ToolOK = true
			}
			if !e.OK {
				res.ToolSignal = toolSignal(e)
			}
		}
	}
	res.Duration = time.Since(start)
	if cancelSent {
		res.CancelToEnd = time.Since(cancelAt)
	}
	r := stream.Result()
	res.State = r.State
	if r.Finished != nil {
		res.Status = r.Finished.Status
	}
	var cancelErr error
	if cancelSent {
		if cancelErr = <-cancelDone; cancelErr != nil {
			res.CancelError = cancelErr.Error()
		}
	}

	judgeTurn(&res, cfg, cancel, cancelSent, streamErr, cancelErr)
	return res
}

// judgeTurn sets res.OK, or res.Error saying what went wrong, from how the
// turn ended.
func judgeTurn(res *Turn, cfg Config, cancel, cancelSent bool, streamErr, cancelErr error) {
	// A cancel that reaches the vessel after the turn finished is refused as
	// not cancelable; the turn then has to be a correct completed turn.
	late := cancel && cancelSent && res.State == "TASK_STATE_COMPLETED" &&
		errors.Is(cancelErr, a2a.ErrTaskNotCancelable)
	if late {
		res.LateCancel = true
		cancel = false
	}
	switch {
	case streamErr != nil:
		res.Error = streamErr.Error()
	case cancel && !cancelSent:
		res.Error = "no text arrived to cancel during"
	case cancel && res.State != "TASK_STATE_CANCELED":
		res.Error = fmt.Sprintf("cancelled turn ended in %s (status %q)", res.State, res.Status)
		if cancelErr != nil {
			res.Error += "; CancelTask answered: " + cancelErr.Error()
		}
	case cancel && cancelErr != nil:
		res.Error = "cancel: " + cancelErr.Error()
	case !cancel && res.State != "TASK_STATE_COMPLETED":
		res.Error = fmt.Sprintf("turn ended in %s (status %q)", res.State, res.Status)
	case res.ToolSignal != "":
		res.Error = "the shell command was ended by " + res.ToolSignal + ", which the turn did not ask for"
	case !cancel && !res.ToolOK:
		res.Error = "the shell command did not run (no successful tool.finished with its output)"
	case !cancel && res.TextBytes != len(answerText(cfg.Pieces)):
		res.Error = fmt.Sprintf("streamed %d bytes of text, want %d", res.TextBytes, len(answerText(cfg.Pieces)))
	default:
		res.OK = true
	}
}
