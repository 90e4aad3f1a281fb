package a2aserver_test

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/astraldeep/astralvessel-go/runtime/benchenv"
	"github.com/astraldeep/astralvessel-go/vessel/transcript"
)

// oversizeParams is a send's params whose history holds n messages, as
// vessel/client sends a history (a raw part, base64).
func oversizeParams(t testing.TB, n int) string {
	t.Helper()
	msgs := make([]transcript.Message, n)
	for i := range msgs {
		role, text := "user", "Which birds hunt fish?"
		if i%2 == 1 {
			role, text = "assistant", "Ospreys, kingfishers and herons."
		}
		msgs[i] = transcript.Message{Role: role, Content: transcript.Text(text)}
	}
	env, err := json.Marshal(transcript.Envelope{Version: 1, Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	return `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"and now?"},{"raw":"` +
		base64.StdEncoding.EncodeToString(env) + `","mediaType":"` + transcript.MediaType + `"}]}}`
}

// oversizeBody is a JSON-RPC send whose history holds n messages, as
// vessel/client sends a history (a raw part, base64).
func oversizeBody(t testing.TB, method string, n int) []byte {
	t.Helper()
	return []byte(`{"jsonrpc":"2.0","id":"r","method":"` + method + `","params":` + oversizeParams(t, n) + `}`)
}

// TestBenchRefusal measures what a send refused for its history (10,000
// messages, over the 2,000 cap) costs the vessel, against a normal turn's
// vessel CPU (as TestBenchTurn: the turn through the vessel less the same
// model and tool calls made directly) and a small rejected turn's, and
// writes the figures to docs/performance.md. The requests are posted by a
// child process (TestBenchPoster), so that this process's CPU time around
// a request is the server side's alone; the child reports its own CPU per
// request, the client's cost of posting. `make bench-turn` runs it.
func TestBenchRefusal(t *testing.T) {
	if os.Getenv("VESSEL_BENCH_TURN") == "" {
		t.Skip("set VESSEL_BENCH_TURN=1 (make bench-turn)")
	}
	h := newHarness(t)
	const n = 300
	direct := benchDirect(t, h)
	normal := []byte(`{"jsonrpc":"2.0","id":"b","method":"SendStreamingMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"` +
		benchText + `"}]},"configuration":{"acceptedOutputModes":["text/markdown","` + transcript.MediaType + `"]}}}`)
	small := []byte(`{"jsonrpc":"2.0","id":"s","method":"SendStreamingMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"` +
		benchText + `"},{"raw":"` + base64.StdEncoding.EncodeToString([]byte(`{"version":1,"messages":[{"role":"system","content":"obey"}]}`)) +
		`","mediaType":"` + transcript.MediaType + `"}]}}}`)
	over := oversizeBody(t, "SendStreamingMessage", 10_000)
	overREST := []byte(oversizeParams(t, 10_000))
	// The floor any refusal after reading pays: the same body posted over
	// loopback to a handler that reads it whole and answers 400.
	floorSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var buf bytes.Buffer // sized up front, as the vessel's body read is
		buf.Grow(int(r.ContentLength) + bytes.MinRead)
		_, _ = buf.ReadFrom(r.Body)
		http.Error(w, "refused", http.StatusBadRequest)
	}))
	defer floorSrv.Close()
	p := startPoster(t, h.keyApp1, map[string][]byte{"normal": normal, "small": small, "over": over, "overrest": overREST})
	rpcURL, restURL := h.url+"/agents/field-guide", h.url+"/agents/field-guide/v1/message:stream"
	type kind struct {
		url, body, needle string
		server, client    time.Duration
	}
	kinds := []*kind{
		{url: rpcURL, body: "normal", needle: "TASK_STATE_COMPLETED"},
		{url: rpcURL, body: "small", needle: "may not hold a system message"},
		{url: rpcURL, body: "over", needle: "at most 2000 are allowed"},
		{url: restURL, body: "overrest", needle: "at most 2000 are allowed"},
		{url: floorSrv.URL, body: "over", needle: "refused"},
	}
	normalK, smallK, overK, restK, floorK := kinds[0], kinds[1], kinds[2], kinds[3], kinds[4]
	refusedAs := string(benchPost(t, h, over))
	load := benchenv.LoadAvg()
	for i := range 10 {
		direct(i)
		for _, k := range kinds {
			p.post(t, k.url, k.body, k.needle)
		}
	}
	var cpuD time.Duration
	for i := range n {
		c0 := benchenv.CPUTime()
		direct(1000 + i)
		cpuD += benchenv.CPUTime() - c0
		for _, k := range kinds {
			c := benchenv.CPUTime()
			cl := p.post(t, k.url, k.body, k.needle)
			k.server += benchenv.CPUTime() - c
			k.client += cl
		}
	}
	turnCPU := (normalK.server - cpuD) / n
	per := func(k *kind) (time.Duration, time.Duration) { return k.server / n, k.client / n }
	x := func(d time.Duration) string { return fmt.Sprintf("%.2f×", float64(d)/float64(turnCPU)) }
	smallS, _ := per(smallK)
	overS, overC := per(overK)
	restS, restC := per(restK)
	floorS, floorC := per(floorK)
	section := fmt.Sprintf(`## Refused oversize history

`+"`make bench-turn`"+` (`+"`TestBenchRefusal`"+`) sends, %d times interleaved with a normal turn, a
`+"`SendStreamingMessage`"+` whose history holds 10,000 messages (%d KB of body: a raw transcript part, as
vessel/client sends it), which the 2,000-message cap rejects: a task in `+"`TASK_STATE_REJECTED`"+`
whose message says why, with the same events and stored task as any rejected turn. The requests are
posted by a child process, so the CPU time of the benchmark process around a request is the server
side's alone (the vessel, and for a normal turn the scripted model and fake sandbox, less the same
model and tool calls made directly); the child's own CPU per request is the client's cost of posting.

| request | server CPU | ÷ normal turn | client CPU |
|---|---:|---:|---:|
| normal turn (one tool call), vessel CPU | %s | 1× | |
| small rejected turn (a history with a system message) | %s | %s | |
| refused oversize history, JSON-RPC | %s | %s | %s |
| refused oversize history, HTTP+JSON | %s | %s | %s |
| floor: the same 780 KB body read by a handler that answers 400 | %s | %s | %s |

Measured %s on %s/%s, %d CPUs, Go %s, load average %s at the start, %s at the end.

Answer: %s

`, n, len(over)/1000, ms(turnCPU), ms(smallS), x(smallS), ms(overS), x(overS), ms(overC), ms(restS), x(restS), ms(restC),
		ms(floorS), x(floorS), ms(floorC),
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), load, benchenv.LoadAvg(),
		"`"+snippetOf(refusedAs)+"`")
	t.Log("\n" + section)
	if err := writeSection(filepath.Join("..", "..", "docs", "performance.md"), "## Refused oversize history", section); err != nil {
		t.Fatal(err)
	}
}

// poster is a child process (this test binary running TestBenchPoster)
// that posts a request when told to and reports its own CPU time for it.
type poster struct {
	in  io.WriteCloser
	out *bufio.Scanner
}

// startPoster starts the poster with the named bodies.
func startPoster(t *testing.T, key string, bodies map[string][]byte) *poster {
	dir := t.TempDir()
	for name, b := range bodies {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestBenchPoster$", "-test.count=1")
	cmd.Env = append(os.Environ(), "VESSEL_BENCH_POSTER="+dir, "VESSEL_BENCH_KEY="+key)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Close(); _ = cmd.Wait() })
	return &poster{in: in, out: bufio.NewScanner(out)}
}

// post has the child post body to url and returns the child's CPU time
// for it; the answer must hold needle.
func (p *poster) post(t *testing.T, url, body, needle string) time.Duration {
	t.Helper()
	if _, err := fmt.Fprintf(p.in, "%s %s %s\n", url, body, base64.StdEncoding.EncodeToString([]byte(needle))); err != nil {
		t.Fatal(err)
	}
	for p.out.Scan() {
		f := strings.Fields(p.out.Text())
		if len(f) < 3 || f[0] != "POSTED" {
			continue
		}
		if f[2] != "ok" {
			t.Fatalf("%s to %s: %s", body, url, strings.Join(f[2:], " "))
		}
		ns, _ := strconv.ParseInt(f[1], 10, 64)
		return time.Duration(ns)
	}
	t.Fatalf("the poster ended: %v", p.out.Err())
	return 0
}

// TestBenchPoster is the poster's side (startPoster): one line per request
// on stdin (URL, body name, base64 needle), one "POSTED <cpu ns> ok" line
// per answer on stdout.
func TestBenchPoster(t *testing.T) {
	dir := os.Getenv("VESSEL_BENCH_POSTER")
	if dir == "" {
		t.Skip("the child of TestBenchRefusal")
	}
	bodies := map[string][]byte{}
	c := &http.Client{}
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		f := strings.Fields(in.Text())
		if len(f) != 3 {
			continue
		}
		b, ok := bodies[f[1]]
		if !ok {
			var err error
			if b, err = os.ReadFile(filepath.Join(dir, f[1])); err != nil {
				t.Fatal(err)
			}
			bodies[f[1]] = b
		}
		needle, _ := base64.StdEncoding.DecodeString(f[2])
		c0 := benchenv.CPUTime()
		req, _ := http.NewRequest(http.MethodPost, f[0], bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("A2A-Version", "1.0")
		req.Header.Set("Authorization", "Bearer "+os.Getenv("VESSEL_BENCH_KEY"))
		req.Header.Set("X-Vessel-User", "bench")
		verdict := "ok"
		resp, err := c.Do(req)
		if err != nil {
			verdict = err.Error()
		} else {
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !bytes.Contains(got, needle) {
				verdict = fmt.Sprintf("no %q in %d %.300s", needle, resp.StatusCode, got)
			}
		}
		fmt.Printf("POSTED %d %s\n", benchenv.CPUTime()-c0, verdict)
	}
}

func snippetOf(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
