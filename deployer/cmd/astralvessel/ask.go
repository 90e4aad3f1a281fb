package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/astraldeep/astralvessel-go/deployer/localstack"
	"github.com/astraldeep/astralvessel-go/vessel/client"
	"github.com/astraldeep/astralvessel-go/vessel/client/history"
)

func init() {
	register(&command{
		name:    "ask",
		usage:   "ask [--agent ID] [--new | --conversation ID] [--url URL --key KEY --user U] [--binding jsonrpc|rest|grpc] [--approve LIST] [--background [--webhook URL --webhook-token T [--webhook-working]]] [--state DIR] [--files DIR] QUESTION...",
		summary: "ask an agent of the local stack (or --url) and stream the answer",
		run:     runAsk,
	})
}

// askTarget is where ask sends its question.
type askTarget struct {
	url, key, user, agent string
}

// stdin is where "ask -" reads its question; tests replace it.
var stdin io.Reader = os.Stdin

// maxQuestion bounds a question read from stdin or a file.
const maxQuestion = 1 << 20

func runAsk(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("ask", stderr)
	agent := fs.String("agent", "", "agent id (default: the first agent)")
	newConv := fs.Bool("new", false, "start a new conversation instead of continuing the last one")
	url := fs.String("url", "", "vessel base URL (default: the running local stack)")
	key := fs.String("key", "", "app key (default: $VESSEL_APP_KEY, or the local stack's key)")
	user := fs.String("user", "", "X-Vessel-User (default: $VESSEL_USER, or \"local\")")
	state := fs.String("state", localstack.DefaultStateDir(), "state folder of the local stack (holds the conversation history)")
	conv := fs.String("conversation", "", "conversation id to use (default: the agent's current one)")
	filesDir := fs.String("files", "", "folder for files the agent returns (default: STATE/files)")
	file := fs.String("file", "", "read the question from this file (- for stdin)")
	bindingName := fs.String("binding", "jsonrpc", "A2A binding to ask over: jsonrpc, rest (HTTP+JSON) or grpc (at the card's GRPC interface)")
	approve := fs.String("approve", "", "ask to approve more calls before they run: tool names, scopes, service:NAME or all, comma-separated (X-Vessel-Approve)")
	background := fs.Bool("background", false, "start the turn in the background and print its task id (follow it with astralvessel task ID)")
	webhookURL := fs.String("webhook", "", "with --background: a webhook URL the vessel pushes the task's status changes to (within the app's push_urls)")
	webhookToken := fs.String("webhook-token", "", "with --webhook: the token the vessel sends with each push")
	webhookWorking := fs.Bool("webhook-working", false, "with --webhook: push every working update of the turn too (the push-working extension), not only its end and pauses")
	pos, code, ok := parseFlags(fs, args, stdout, stderr)
	if !ok {
		return code
	}
	if (*webhookURL != "" || *webhookToken != "" || *webhookWorking) && !*background {
		fmt.Fprintln(stderr, "astralvessel ask: --webhook, --webhook-token and --webhook-working need --background")
		return 2
	}
	if *webhookWorking && *webhookURL == "" {
		fmt.Fprintln(stderr, "astralvessel ask: --webhook-working needs --webhook")
		return 2
	}
	question, err := readQuestion(pos, *file)
	if err != nil {
		fmt.Fprintf(stderr, "astralvessel ask: %v\n", err)
		return 1
	}
	if question == "" {
		usageError("ask", stderr)
		return 2
	}
	binding, err := client.ParseBinding(*bindingName)
	if err != nil {
		fmt.Fprintf(stderr, "astralvessel ask: %v\n", err)
		return 2
	}
	if *newConv && *conv != "" {
		fmt.Fprintln(stderr, "astralvessel ask: --new and --conversation exclude each other")
		return 2
	}

	t, err := resolveTarget(*url, *key, *user, *agent, *state)
	if err != nil {
		fmt.Fprintf(stderr, "astralvessel ask: %v\n", err)
		return 1
	}
	var approveList []string
	if *approve != "" {
		approveList = []string{*approve}
	}
	opts := client.Options{AppKey: t.key, User: t.user, Binding: binding, Approve: approveList}
	if binding == client.BindingGRPC {
		// The gRPC address is the card's: the vessel listens for gRPC on a port of its own.
		if opts.GRPCAddress, err = cardGRPCAddress(t); err != nil {
			fmt.Fprintf(stderr, "astralvessel ask: %v\n", err)
			return 1
		}
	}
	c, err := client.New(t.url, t.agent, opts)
	if err != nil {
		fmt.Fprintf(stderr, "astralvessel ask: %v\n", err)
		return 1
	}
	store, err := history.Open(filepath.Join(*state, "history"))
	if err != nil {
		fmt.Fprintf(stderr, "astralvessel ask: %v\n", err)
		return 1
	}
	convID, fresh, err := conversationID(store, *state, t.agent, *conv, *newConv)
	if err != nil {
		fmt.Fprintf(stderr, "astralvessel ask: %v\n", err)
		return 1
	}
	past, err := store.Messages(convID)
	if err != nil {
		fmt.Fprintf(stderr, "astralvessel ask: %v\n", err)
		return 1
	}
	if fresh || len(past) == 0 {
		fmt.Fprintf(stderr, "conversation %s (new; the next ask continues it, --new starts another)\n", convID)
	} else {
		fmt.Fprintf(stderr, "conversation %s (continued, %d messages before; --new starts another)\n", convID, len(past))
	}
	if *background {
		var hook *client.Webhook
		if *webhookURL != "" {
			hook = &client.Webhook{URL: *webhookURL, Token: *webhookToken, Working: *webhookWorking}
		}
		res, err := c.Submit(context.Background(), client.TurnRequest{Text: question, History: past, ContextID: convID}, hook)
		if err != nil {
			fmt.Fprintf(stderr, "astralvessel ask: %v\n", err)
			return 1
		}
		fmt.Fprintln(stdout, res.TaskID)
		fmt.Fprintf(stderr, "started in the background (%s); astralvessel task %s shows its state and answer\n", res.State, res.TaskID)
		return 0
	}
	fdir := *filesDir
	if fdir == "" {
		fdir = filepath.Join(*state, "files")
	}
	code = streamTurn(c, store, convID, question, past, fdir, stdout, stderr)
	if code == 0 || *conv != "" {
		// The agent's current conversation moves only once it answered (or
		// was named): a failed first turn leaves nothing behind.
		if err := setCurrent(*state, t.agent, convID); err != nil {
			fmt.Fprintf(stderr, "astralvessel ask: %v\n", err)
		}
	}
	return code
}

// readQuestion is the question: the arguments joined, or "-" (stdin), or
// "@FILE" (a file) as the only argument, or --file.
func readQuestion(pos []string, file string) (string, error) {
	if file != "" {
		if len(pos) > 0 {
			return "", errors.New("give the question either as arguments or with --file, not both")
		}
		return readQuestionFrom(file)
	}
	if len(pos) == 1 && (pos[0] == "-" || strings.HasPrefix(pos[0], "@") && len(pos[0]) > 1) {
		src := pos[0]
		if src != "-" {
			src = src[1:]
		}
		return readQuestionFrom(src)
	}
	return strings.TrimSpace(strings.Join(pos, " ")), nil
}

func readQuestionFrom(src string) (string, error) {
	var r io.Reader = stdin
	name := "stdin"
	if src != "-" {
		f, err := os.Open(src)
		if err != nil {
			return "", fmt.Errorf("read the question: %w", err)
		}
		defer f.Close()
		r, name = f, src
	}
	b, err := io.ReadAll(io.LimitReader(r, maxQuestion+1))
	if err != nil {
		return "", fmt.Errorf("read the question from %s: %w", name, err)
	}
	if len(b) > maxQuestion {
		return "", fmt.Errorf("the question in %s is over %d bytes", name, maxQuestion)
	}
	q := strings.TrimSpace(string(b))
	if q == "" {
		return "", fmt.Errorf("the question in %s is empty", name)
	}
	return q, nil
}

// resolveTarget takes the flags, else the environment, else the running
// local stack's stack.json, and checks that the agent is one the key may
// call.
func resolveTarget(url, key, user, agent, state string) (askTarget, error) {
	t := askTarget{url: url, key: key, user: user, agent: agent}
	if t.key == "" {
		t.key = os.Getenv("VESSEL_APP_KEY")
	}
	if t.user == "" {
		t.user = os.Getenv("VESSEL_USER")
	}
	fromStack := t.url == ""
	if fromStack {
		info, err := localstack.ReadInfo(state)
		if err != nil {
			return t, err
		}
		t.url = info.URL
		if key == "" {
			// The local stack's own key wins over $VESSEL_APP_KEY, which is
			// usually the Compose deployment's.
			if t.key, err = info.AppKey(); err != nil {
				return t, err
			}
		}
		if t.user == "" {
			t.user = info.User
		}
		if t.agent == "" && len(info.Agents) > 0 {
			t.agent = info.Agents[0]
		}
	}
	if t.user == "" {
		t.user = localstack.LocalUser
	}
	if t.key == "" {
		return t, errors.New("no app key: pass --key or set VESSEL_APP_KEY")
	}
	agents, err := listAgents(t)
	if err != nil {
		return t, describeConnErr(t.url, fromStack, state, err)
	}
	if len(agents) == 0 {
		return t, errors.New("this key may call no agent (GET /v1/agents lists none)")
	}
	if t.agent == "" {
		t.agent = agents[0]
		return t, nil
	}
	if !slices.Contains(agents, t.agent) {
		return t, fmt.Errorf("unknown agent %q at %s; this key may call: %s", t.agent, t.url, strings.Join(agents, ", "))
	}
	return t, nil
}

// describeConnErr turns "connection refused" into what it means.
func describeConnErr(url string, fromStack bool, state string, err error) error {
	if !errors.Is(err, syscall.ECONNREFUSED) {
		return err
	}
	if fromStack {
		return fmt.Errorf("the local stack of %s is not running at %s (nothing listens there): start it with `astralvessel up` (or `make run` for a one-off demo)", state, url)
	}
	return fmt.Errorf("nothing listens at %s: is the vessel running? (%w)", url, err)
}

// listAgents asks /v1/agents which agents the caller may call.
func listAgents(t askTarget) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(t.url, "/")+"/v1/agents", nil)
	if err != nil {
		return nil, fmt.Errorf("list agents: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+t.key)
	req.Header.Set("X-Vessel-User", t.user)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("list agents: %w", err)
	}
	defer resp.Body.Close()
	var body struct {
		Agents []struct {
			ID string `json:"id"`
		} `json:"agents"`
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("list agents at %s: %s", t.url, resp.Status)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&body); err != nil {
		return nil, fmt.Errorf("list agents: %w", err)
	}
	ids := make([]string, 0, len(body.Agents))
	for _, a := range body.Agents {
		ids = append(ids, a.ID)
	}
	return ids, nil
}

// currentFile holds the id of an agent's current conversation.
func currentFile(state, agent string) string {
	return filepath.Join(state, "history", "current-"+filepath.Base(agent))
}

// conversationID returns the conversation to use: the explicit one, else the
// agent's current one (unless fresh), else a new one (fresh is then true).
// Nothing is written here; see setCurrent.
func conversationID(store *history.Store, state, agent, explicit string, fresh bool) (string, bool, error) {
	id := explicit
	if id == "" && !fresh {
		if b, err := os.ReadFile(currentFile(state, agent)); err == nil {
			id = strings.TrimSpace(string(b))
		}
	}
	isNew := false
	if id == "" {
		r := make([]byte, 6)
		if _, err := rand.Read(r); err != nil {
			return "", false, fmt.Errorf("conversation id: %w", err)
		}
		id = "cli-" + time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(r)
		isNew = true
	}
	if _, err := store.Load(id); err != nil {
		return "", false, err
	}
	return id, isNew, nil
}

// setCurrent makes id the agent's current conversation.
func setCurrent(state, agent, id string) error {
	if err := os.WriteFile(currentFile(state, agent), []byte(id+"\n"), 0o600); err != nil {
		return fmt.Errorf("conversation id: %w", err)
	}
	return nil
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// streamTurn runs one turn: the answer to stdout, reasoning and tool
// activity to stderr; the first Ctrl-C cancels the task, a second one quits.
func streamTurn(c *client.Client, store *history.Store, convID, question string, past []client.Message, filesDir string, stdout, stderr io.Writer) int {
	ctx, cancelStream := context.WithCancel(context.Background())
	defer cancelStream()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)

	s := c.Turn(ctx, client.TurnRequest{Text: question, History: past, ContextID: convID})
	var taskID atomic.Value // string: the turn's task, for Ctrl-C
	taskID.Store("")
	var interrupted atomic.Bool
	// out serialises the writes of this loop and of the signal goroutine, and
	// knows whether stdout is in the middle of a line.
	var outMu sync.Mutex
	v := &turnView{stdout: stdout, stderr: stderr, filesDir: filesDir}
	go v.interrupted(sigs, &outMu, &interrupted, &taskID, c, cancelStream)

	if isTerminal(stderr) {
		v.dim, v.undim = "\x1b[2m", "\x1b[0m"
	}
	var streamErr error
	prompt := newPrompter(stdin, stderr)
	for {
		streamErr = nil
		for ev, err := range s.Events() {
			if err != nil {
				streamErr = err
				break
			}
			taskID.Store(s.TaskID())
			outMu.Lock()
			if interrupted.Load() {
				// Cancelling: the rest of the stream is not shown.
				outMu.Unlock()
				continue
			}
			v.show(ev, s.TaskID())
			outMu.Unlock()
		}
		// A turn that paused for approval: ask at the terminal, then follow
		// the rest of the turn.
		pending := s.Result().Pending()
		if streamErr != nil || pending == nil || interrupted.Load() {
			break
		}
		decisions, err := prompt.decide(pending)
		if err != nil {
			streamErr = err
			break
		}
		s = c.Decide(ctx, pending, decisions)
	}
	outMu.Lock()
	v.endReasoning()
	if v.wroteText && !interrupted.Load() {
		fmt.Fprintln(stdout)
	}
	outMu.Unlock()
	res := s.Result()
	// Keep only answered turns: a cancelled or failed turn's partial
	// transcript would leave a question without its answer in the history.
	answered := res.Finished != nil && (res.Finished.Status == "ok" || res.Finished.Status == "step_limit")
	msgs := res.Messages
	if len(msgs) == 0 && res.Markdown() != "" {
		// No transcript came back: keep at least the question and answer.
		msgs = []client.Message{client.UserMessage(question), client.AssistantMessage(res.Markdown())}
	}
	if answered && len(msgs) > 0 {
		if err := store.Append(convID, c.AgentID(), msgs...); err != nil {
			fmt.Fprintf(stderr, "astralvessel ask: keeping history: %v\n", err)
		}
	}
	switch {
	case interrupted.Load():
		if res.Finished != nil && res.Finished.Status == "cancelled" {
			fmt.Fprintln(stderr, "cancelled")
		} else {
			fmt.Fprintln(stderr, "cancelled (stopped waiting for the task's end)")
		}
		return 130
	case streamErr != nil:
		fmt.Fprintf(stderr, "astralvessel ask: %v\n", streamErr)
		return 1
	case res.Finished == nil:
		return 1
	case res.Finished.Status != "ok" && res.Finished.Status != "step_limit":
		why := res.Finished.Reason
		if why == "" {
			why = res.Finished.Error
		}
		fmt.Fprintf(stderr, "turn ended: %s %s\n", res.Finished.Status, why)
		return 1
	}
	return 0
}

// interrupted waits for Ctrl-C: it stops the output, asks the vessel to
// cancel the turn, and ends the stream once the cancel is answered (or
// at the second Ctrl-C).
func (v *turnView) interrupted(sigs chan os.Signal, outMu *sync.Mutex, interrupted *atomic.Bool, taskID *atomic.Value,
	c *client.Client, cancelStream context.CancelFunc) {
	<-sigs
	outMu.Lock()
	interrupted.Store(true)
	if v.midLine {
		fmt.Fprintln(v.stdout)
		v.midLine = false
	}
	outMu.Unlock()
	if id := taskID.Load().(string); id != "" {
		fmt.Fprintln(v.stderr, "cancelling… (Ctrl-C again quits at once)")
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := c.Cancel(cctx, id)
		cancel()
		if err == nil {
			// The stream ends by itself with turn.finished (cancelled);
			// don't wait forever for it.
			select {
			case <-sigs:
			case <-time.After(5 * time.Second):
			}
		}
	}
	cancelStream()
}

// turnView shows a turn's events at the terminal: the answer on stdout,
// reasoning, tools and files on stderr.
type turnView struct {
	stdout, stderr io.Writer
	dim, undim     string
	filesDir       string
	inReasoning    bool
	wroteText      bool
	// midLine: stdout is in the middle of a line (the signal handler reads
	// it under the caller's lock).
	midLine bool
	// toolSince: a tool ran after text was written; the next text (the
	// final answer) starts a new paragraph instead of joining it.
	toolSince bool
}

func (v *turnView) endReasoning() {
	if v.inReasoning {
		fmt.Fprintf(v.stderr, "%s\n", v.undim)
		v.inReasoning = false
	}
}

// show writes one event.
func (v *turnView) show(ev client.Event, taskID string) {
	switch e := ev.(type) {
	case client.ReasoningDelta:
		if !v.inReasoning {
			fmt.Fprintf(v.stderr, "%sreasoning: ", v.dim)
			v.inReasoning = true
		}
		fmt.Fprint(v.stderr, e.Text)
	case client.TextDelta:
		v.endReasoning()
		if v.toolSince {
			sep := "\n"
			if v.midLine {
				sep = "\n\n"
			}
			fmt.Fprint(v.stdout, sep)
			v.toolSince = false
		}
		fmt.Fprint(v.stdout, e.Text)
		v.wroteText = true
		v.midLine = !strings.HasSuffix(e.Text, "\n")
	case client.ToolStarted:
		v.endReasoning()
		v.toolSince = v.wroteText
		fmt.Fprintf(v.stderr, "%s[tool %s %s]%s\n", v.dim, e.Name, argsPreview(e.Arguments), v.undim)
	case client.ApprovalRequired:
		v.endReasoning()
		if v.midLine {
			fmt.Fprintln(v.stdout)
			v.midLine = false
		}
	case client.ModelRetry:
		v.endReasoning()
		fmt.Fprintf(v.stderr, "%s[model: %s; trying again in %s]%s\n", v.dim, e.Error, e.Wait.Round(time.Millisecond), v.undim)
	case client.ToolFinished:
		state := "ok"
		if !e.OK {
			state = "failed"
			if e.Error != "" {
				state += ": " + e.Error
			}
		}
		fmt.Fprintf(v.stderr, "%s[tool %s %s]%s\n", v.dim, e.Name, state, v.undim)
	case client.File:
		v.endReasoning()
		p, err := saveFile(v.filesDir, taskID, e)
		if err != nil {
			fmt.Fprintf(v.stderr, "could not save %s: %v\n", e.Name, err)
		} else {
			fmt.Fprintf(v.stderr, "[file %s saved to %s]\n", e.Name, p)
		}
	case client.Answer:
		v.endReasoning()
		if !v.wroteText && e.Markdown != "" {
			fmt.Fprint(v.stdout, e.Markdown)
			v.wroteText = true
			v.midLine = !strings.HasSuffix(e.Markdown, "\n")
		}
	}
}

func argsPreview(a any) string {
	var s string
	switch v := a.(type) {
	case nil:
		return ""
	case string:
		s = v
	default:
		b, _ := json.Marshal(v)
		s = string(b)
	}
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}

// saveFile writes a returned file under dir/<task>/ with its base name only.
func saveFile(dir, taskID string, f client.File) (string, error) {
	name := filepath.Base(f.Name)
	if name == "." || name == "/" || name == "" || strings.HasPrefix(name, ".") {
		name = "file"
	}
	d := filepath.Join(dir, filepath.Base(taskID))
	if err := os.MkdirAll(d, 0o700); err != nil {
		return "", err
	}
	p := filepath.Join(d, name)
	if err := os.WriteFile(p, f.Data, 0o600); err != nil {
		return "", err
	}
	return p, nil
}

// cardGRPCAddress reads the agent's card for its GRPC interface.
func cardGRPCAddress(t askTarget) (string, error) {
	c, err := client.New(t.url, t.agent, client.Options{AppKey: t.key, User: t.user})
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return c.GRPCAddress(ctx)
}
