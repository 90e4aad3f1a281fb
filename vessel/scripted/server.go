package scripted

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"
)

// Server serves /v1/chat/completions and /v1/models from a script.
type Server struct {
	mu     sync.RWMutex
	script *Script
	model  string

	errMu  sync.Mutex
	errors map[string]int // scripted errors already sent, per conversation and step

	requests atomic.Int64
	seq      atomic.Int64
}

// NewServer returns a server replaying s (Default() when nil).
func NewServer(s *Script) *Server {
	if s == nil {
		s = Default()
	}
	return &Server{script: s, model: "scripted", errors: map[string]int{}}
}

// SetScript swaps the script; requests in flight keep the old one.
func (s *Server) SetScript(sc *Script) {
	s.mu.Lock()
	s.script = sc
	s.mu.Unlock()
}

// Requests is the number of chat completion requests served so far.
func (s *Server) Requests() int64 { return s.requests.Load() }

// ServeHTTP routes the OpenAI-compatible endpoints.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimSuffix(r.URL.Path, "/")
	switch {
	case path == "/v1/models" || path == "/models":
		if r.Method != http.MethodGet {
			writeError(w, http.StatusMethodNotAllowed, "method not allowed")
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{
			map[string]any{"id": s.model, "object": "model", "created": 0, "owned_by": "astralvessel"},
		}})
	case path == "/v1/chat/completions" || path == "/chat/completions":
		if r.Method != http.MethodPost {
			writeError(w, http.StatusMethodNotAllowed, "method not allowed")
			return
		}
		s.requests.Add(1)
		s.completions(w, r)
	case path == "/health":
		writeJSON(w, http.StatusOK, map[string]any{"ok": true})
	default:
		writeError(w, http.StatusNotFound, "not found")
	}
}

// request is the part of a chat completion request the server reads.
type request struct {
	Model    string    `json:"model"`
	Messages []message `json:"messages"`
	Tools    []toolRef `json:"tools"`
	Stream   bool      `json:"stream"`
}

type toolRef struct {
	Function struct {
		Name string `json:"name"`
	} `json:"function"`
}

type message struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCallID string          `json:"tool_call_id"`
}

// text returns a message's content as text, whether it was a string or a
// list of content parts.
func (m message) text() string {
	if len(m.Content) == 0 || string(m.Content) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(m.Content, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
		}
		return b.String()
	}
	return ""
}

// turn is what a rule is matched against.
type turn struct {
	lastUser   string
	step       int
	tools      map[string]bool
	toolResult string // content of the last tool message, if any
	promptLen  int
}

func readTurn(req *request) turn {
	t := turn{tools: map[string]bool{}}
	lastUser := -1
	for i, m := range req.Messages {
		t.promptLen += len(m.Content)
		if m.Role == "user" {
			lastUser = i
		}
	}
	if lastUser >= 0 {
		t.lastUser = req.Messages[lastUser].text()
		for _, m := range req.Messages[lastUser+1:] {
			if m.Role == "assistant" {
				t.step++
			}
			if m.Role == "tool" {
				t.toolResult = m.text()
			}
		}
	}
	for _, tl := range req.Tools {
		t.tools[tl.Function.Name] = true
	}
	return t
}

// choose finds the rule and step for a turn.
func (sc *Script) choose(t turn) (*Rule, Step) {
	var rule *Rule
	if i := strings.Index(t.lastUser, "#script:"); i >= 0 {
		name := t.lastUser[i+len("#script:"):]
		if j := strings.IndexAny(name, " \t\r\n"); j >= 0 {
			name = name[:j]
		}
		for k := range sc.Rules {
			if sc.Rules[k].Name == name {
				rule = &sc.Rules[k]
				break
			}
		}
	}
	if rule == nil {
		for k := range sc.Rules {
			if sc.Rules[k].Match.matches(t) {
				rule = &sc.Rules[k]
				break
			}
		}
	}
	if rule == nil {
		if sc.Default != nil && len(sc.Default.Steps) > 0 {
			rule = sc.Default
		} else {
			rule = &Rule{Name: "echo", Steps: []Step{{Text: "You said: {{last_user}}"}}}
		}
	}
	i := t.step
	if i >= len(rule.Steps) {
		i = len(rule.Steps) - 1
	}
	return rule, rule.Steps[i]
}

func (m Match) matches(t turn) bool {
	if m.Contains == "" && m.Tool == "" && m.Step == nil {
		return false // a rule without conditions is chosen only by its marker
	}
	if m.Contains != "" && !strings.Contains(t.lastUser, m.Contains) {
		return false
	}
	if m.Tool != "" && !t.tools[m.Tool] {
		return false
	}
	if m.Step != nil && *m.Step != t.step {
		return false
	}
	return true
}

func (s *Server) completions(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		writeError(w, http.StatusBadRequest, "read body: "+err.Error())
		return
	}
	var req request
	if err := decodeRequest(body, &req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid JSON: "+err.Error())
		return
	}
	if len(req.Messages) == 0 {
		writeError(w, http.StatusBadRequest, "messages must not be empty")
		return
	}
	s.mu.RLock()
	sc := s.script
	s.mu.RUnlock()

	t := readTurn(&req)
	rule, step := sc.choose(t)

	if step.DelayMS > 0 && !sleep(r, time.Duration(step.DelayMS)*time.Millisecond) {
		return
	}
	if e := step.Error; e != nil && e.Status != 0 {
		key := errorKey(rule.Name, t)
		s.errMu.Lock()
		n := s.errors[key]
		send := e.Count == 0 || n < e.Count
		if send {
			s.errors[key] = n + 1
		}
		s.errMu.Unlock()
		if send {
			msg := e.Message
			if msg == "" {
				msg = fmt.Sprintf("scripted error %d", e.Status)
			}
			if e.Status == http.StatusTooManyRequests || e.Status == http.StatusServiceUnavailable {
				w.Header().Set("Retry-After", "0")
			}
			writeError(w, e.Status, msg)
			return
		}
	}

	reply := render(step, t)
	model := req.Model
	if model == "" {
		model = s.model
	}
	id := fmt.Sprintf("chatcmpl-%d", s.seq.Add(1))
	if req.Stream {
		s.stream(w, r, id, model, step, reply, t)
		return
	}
	msg := map[string]any{"role": "assistant", "content": reply.text}
	if reply.text == "" && len(reply.toolCalls) > 0 {
		msg["content"] = nil
	}
	if reply.reasoning != "" {
		msg["reasoning_content"] = reply.reasoning
	}
	finish := "stop"
	if len(reply.toolCalls) > 0 {
		msg["tool_calls"] = reply.toolCalls
		finish = "tool_calls"
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id": id, "object": "chat.completion", "created": time.Now().Unix(), "model": model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage":   reply.usage(t),
	})
}

// errorKey scopes scripted-error counts to one conversation and step, so
// parallel tests using the same rule do not consume each other's errors.
func errorKey(rule string, t turn) string {
	h := sha256.Sum256([]byte(t.lastUser))
	return fmt.Sprintf("%s/%d/%s", rule, t.step, hex.EncodeToString(h[:8]))
}

type rendered struct {
	text        string
	pieces      []string
	reasoning   string
	reasonParts []string
	toolCalls   []map[string]any
	override    *Usage
}

func (r rendered) usage(t turn) Usage {
	if r.override != nil {
		u := *r.override
		if u.TotalTokens == 0 {
			u.TotalTokens = u.PromptTokens + u.CompletionTokens
		}
		return u
	}
	u := Usage{PromptTokens: t.promptLen/4 + 1, CompletionTokens: len(r.pieces) + len(r.reasonParts) + len(r.toolCalls)}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	return u
}

func render(st Step, t turn) rendered {
	text := expand(st.Text, t)
	var pieces []string
	one := split(text, st.Pieces)
	n := st.Repeat
	if n < 1 {
		n = 1
	}
	for range n {
		pieces = append(pieces, one...)
	}
	r := rendered{text: strings.Repeat(text, n), pieces: pieces, override: st.Usage}
	r.reasoning = expand(st.Reasoning, t)
	r.reasonParts = split(r.reasoning, st.ReasoningPieces)
	for i, tc := range st.ToolCalls {
		id := tc.ID
		if id == "" {
			id = fmt.Sprintf("call_%d_%d", t.step, i)
		}
		args := expandArgs(tc.Arguments, t)
		r.toolCalls = append(r.toolCalls, map[string]any{
			"id": id, "type": "function",
			"function": map[string]any{"name": tc.Name, "arguments": args},
		})
	}
	return r
}

// split cuts s into n pieces of about equal length on rune boundaries.
// The pieces are byte slices of s, so they join to s exactly even when s is
// not valid UTF-8 (each invalid byte counts as one rune).
func split(s string, n int) []string {
	if s == "" {
		return nil
	}
	if n <= 1 {
		return []string{s}
	}
	starts := make([]int, 0, len(s)+1) // byte offset of each rune, then len(s)
	for i := 0; i < len(s); {
		starts = append(starts, i)
		_, w := utf8.DecodeRuneInString(s[i:])
		i += w
	}
	runes := len(starts)
	starts = append(starts, len(s))
	if n > runes {
		n = runes
	}
	out := make([]string, 0, n)
	for i := range n {
		a, b := i*runes/n, (i+1)*runes/n
		out = append(out, s[starts[a]:starts[b]])
	}
	return out
}

func expand(s string, t turn) string {
	if !strings.Contains(s, "{{") {
		return s
	}
	s = strings.ReplaceAll(s, "{{last_user}}", t.lastUser)
	if strings.Contains(s, "{{keyword}}") {
		s = strings.ReplaceAll(s, "{{keyword}}", keyword(t.lastUser))
	}
	s = strings.ReplaceAll(s, "{{tool_result}}", t.toolResult)
	if strings.Contains(s, "{{tool_result_list}}") {
		s = strings.ReplaceAll(s, "{{tool_result_list}}", markdownList(t.toolResult))
	}
	return s
}

// expandArgs fills the templates into every string of a tool call's JSON
// arguments (keys and values), so that the values stay correctly quoted
// whatever the user wrote. No arguments are "{}".
func expandArgs(raw json.RawMessage, t turn) string {
	if len(raw) == 0 {
		return "{}"
	}
	if !bytes.Contains(raw, []byte("{{")) {
		return string(raw)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return string(raw) // Parse checked it; keep it as written
	}
	b, err := json.Marshal(expandValue(v, t))
	if err != nil {
		return string(raw)
	}
	return string(b)
}

func expandValue(v any, t turn) any {
	switch x := v.(type) {
	case string:
		return expand(x, t)
	case []any:
		for i := range x {
			x[i] = expandValue(x[i], t)
		}
		return x
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[expand(k, t)] = expandValue(e, t)
		}
		return out
	}
	return v
}

// stopWords are English function and question words that are never the
// key word of a question.
var stopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a about above after all also am an and any are as at be been before
		being below between both but by can could did do does doing down during each either else ever every
		few for from further had has have having he her here hers him his how i if in into is it its itself
		just me more most much my neither no nor not now of off on once only or other our ours out over own
		please same she should so some such tell than that the their theirs them then there these they this
		those through to too under until up very was we were what when where which while who whom whose why
		will with would you your yours`) {
		stopWords[w] = true
	}
}

// keyword is the key word of a question: its last word of three letters or
// more that is not a stop word, lower-cased; a plural "s" is dropped
// ("cliffs" becomes "cliff", "grass" stays). Empty when there is none.
func keyword(question string) string {
	words := strings.FieldsFunc(strings.ToLower(question), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-' && r != '\''
	})
	for i := len(words) - 1; i >= 0; i-- {
		w := strings.Trim(words[i], "-'")
		if utf8.RuneCountInString(w) < 3 || stopWords[w] {
			continue
		}
		if strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && utf8.RuneCountInString(w) > 3 {
			w = strings.TrimSuffix(w, "s")
		}
		return w
	}
	return ""
}

// markdownList renders a JSON tool result as a Markdown list: arrays item
// by item (objects by their name or common_name field), anything else as
// a quoted block.
func markdownList(result string) string {
	var items []any
	if err := json.Unmarshal([]byte(strings.TrimSpace(result)), &items); err != nil {
		var obj map[string]any
		if json.Unmarshal([]byte(strings.TrimSpace(result)), &obj) == nil {
			for _, k := range []string{"species", "items", "results"} {
				if arr, ok := obj[k].([]any); ok {
					items = arr
					break
				}
			}
		}
		if items == nil {
			if strings.TrimSpace(result) == "" {
				return "- (no result)"
			}
			return "> " + strings.ReplaceAll(strings.TrimSpace(result), "\n", "\n> ")
		}
	}
	if len(items) == 0 {
		return "- (none)"
	}
	var b strings.Builder
	for _, it := range items {
		b.WriteString("- ")
		switch v := it.(type) {
		case map[string]any:
			name := firstString(v, "common_name", "name", "title", "id")
			if name == "" {
				raw, _ := json.Marshal(v)
				name = string(raw)
			}
			b.WriteString(name)
			if sci := firstString(v, "scientific_name", "latin"); sci != "" {
				b.WriteString(" (*" + sci + "*)")
			}
		case string:
			b.WriteString(v)
		default:
			raw, _ := json.Marshal(v)
			b.Write(raw)
		}
		b.WriteString("\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func firstString(m map[string]any, keys ...string) string {
	for _, k := range keys {
		if s, ok := m[k].(string); ok && s != "" {
			return s
		}
	}
	return ""
}

func (s *Server) stream(w http.ResponseWriter, r *http.Request, id, model string, st Step, reply rendered, t turn) {
	fl, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	created := time.Now().Unix()
	// Every chunk is the same envelope around its delta (the members in
	// encoding/json's map order), built once: a 1,000-piece answer would
	// otherwise marshal 1,000 maps.
	idJSON, _ := json.Marshal(id)
	modelJSON, _ := json.Marshal(model)
	tail := fmt.Sprintf(`,"index":0}],"created":%d,"id":%s,"model":%s,"object":"chat.completion.chunk"}`+"\n\n", created, idJSON, modelJSON)
	var buf bytes.Buffer
	sent := 0
	send := func(delta []byte, finish string) bool {
		if st.FailAfterPieces > 0 && sent >= st.FailAfterPieces {
			return false
		}
		buf.Reset()
		buf.WriteString(`data: {"choices":[{"delta":`)
		buf.Write(delta)
		buf.WriteString(`,"finish_reason":`)
		if finish == "" {
			buf.WriteString("null")
		} else {
			b, _ := json.Marshal(finish)
			buf.Write(b)
		}
		buf.WriteString(tail)
		if _, err := w.Write(buf.Bytes()); err != nil {
			return false
		}
		if fl != nil {
			fl.Flush()
		}
		sent++
		if st.PieceDelayMS > 0 {
			return sleep(r, time.Duration(st.PieceDelayMS)*time.Millisecond)
		}
		return r.Context().Err() == nil
	}
	// text is a delta with one string member.
	text := func(key, v string) []byte {
		b, _ := json.Marshal(v)
		return append(append([]byte(`{"`+key+`":`), b...), '}')
	}
	delta := func(v map[string]any) []byte {
		b, _ := json.Marshal(v)
		return b
	}
	if !send([]byte(`{"content":"","role":"assistant"}`), "") {
		return
	}
	for _, p := range reply.reasonParts {
		if !send(text("reasoning_content", p), "") {
			return
		}
	}
	for _, p := range reply.pieces {
		if !send(text("content", p), "") {
			return
		}
	}
	for i, tc := range reply.toolCalls {
		fn := tc["function"].(map[string]any)
		args := fn["arguments"].(string)
		// Name first, then the arguments in two halves, as real servers do.
		if !send(delta(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": tc["id"], "type": "function",
			"function": map[string]any{"name": fn["name"], "arguments": ""}}}}), "") {
			return
		}
		for _, part := range split(args, 2) {
			if !send(delta(map[string]any{"tool_calls": []any{map[string]any{"index": i,
				"function": map[string]any{"arguments": part}}}}), "") {
				return
			}
		}
	}
	finish := "stop"
	if len(reply.toolCalls) > 0 {
		finish = "tool_calls"
	}
	if !send([]byte(`{}`), finish) {
		return
	}
	u := reply.usage(t)
	b, _ := json.Marshal(map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": model,
		"choices": []any{}, "usage": u})
	_, _ = fmt.Fprintf(w, "data: %s\n\ndata: [DONE]\n\n", b)
	if fl != nil {
		fl.Flush()
	}
}

func sleep(r *http.Request, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{
		"message": msg, "type": "scripted_error", "code": status,
	}})
}
