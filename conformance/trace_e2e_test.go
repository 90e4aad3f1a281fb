package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sinkSpan is one line of otlp-sink's output.
type sinkSpan struct {
	Service    string            `json:"service"`
	TraceID    string            `json:"trace_id"`
	SpanID     string            `json:"span_id"`
	ParentID   string            `json:"parent_span_id"`
	Name       string            `json:"name"`
	Attributes map[string]string `json:"attributes"`
}

// readSpans reads the spans otlp-sink has written so far.
func readSpans(t *testing.T, path string) []sinkSpan {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []sinkSpan
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var s sinkSpan
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			t.Fatalf("otlp-sink wrote a line that is not a span: %v: %s", err, sc.Bytes())
		}
		out = append(out, s)
	}
	return out
}

// startSink runs the otlp-sink binary on loopback and returns its OTLP/HTTP
// endpoint and the file it writes the spans to.
func startSink(t *testing.T, bin string) (endpoint, out string) {
	t.Helper()
	out = filepath.Join(t.TempDir(), "spans.jsonl")
	httpAddr := freeAddr(t)
	cmd := exec.Command(filepath.Join(bin, "otlp-sink"), "--grpc-listen", "", "--http-listen", httpAddr, "--out", out)
	var logb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logb, &logb
	if err := cmd.Start(); err != nil {
		t.Fatalf("otlp-sink: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("==== otlp-sink\n%s", logb.String())
		}
	})
	waitTCP(t, httpAddr)
	return "http://" + httpAddr, out
}

// TestLocalStackOneTrace: with the standard OTEL_* variables pointing at a
// real OTLP receiver (the otlp-sink binary on loopback), one turn of the
// local stack (`astralvessel up`: vessel, sandboxd, egress, scripted model)
// is one trace: the turn span is the child of the traceparent the app
// sent, the model calls go on inside the egress and the tool call inside
// sandboxd, all under that trace id. Runs with VESSEL_E2E_LOCAL=1.
func TestLocalStackOneTrace(t *testing.T) {
	if os.Getenv("VESSEL_E2E_LOCAL") != "1" {
		t.Skip("set VESSEL_E2E_LOCAL=1 to run the local-stack trace test")
	}
	const traceID, appSpan = "8bf92f3577b34da6a3ce929d0e0e4736", "40f067aa0ba902b7"
	bin := productBins(t)
	endpoint, spansFile := startSink(t, bin)
	env := append(os.Environ(), "OTEL_EXPORTER_OTLP_ENDPOINT="+endpoint, "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
		"OTEL_BSP_SCHEDULE_DELAY=200")
	dep, _ := filepath.Abs("testdata/deployment.toml")
	info := startUp(t, bin, env, "--scripted", dep)
	key, err := os.ReadFile(info.AppKeyFile) // no span may carry it
	if err != nil {
		t.Fatal(err)
	}
	code, b := postJSONRPC(t, info, "field-guide", "alice", "trace-1", "Which birds hunt fish?",
		"A2A-Version", "1.0", "traceparent", fmt.Sprintf("00-%s-%s-01", traceID, appSpan))
	if code != http.StatusOK || !bytes.Contains(b, []byte("TASK_STATE_COMPLETED")) {
		t.Fatalf("SendMessage: %d %s", code, b)
	}

	want := func(spans []sinkSpan) (turn *sinkSpan, services map[string]int) {
		services = map[string]int{}
		for i, s := range spans {
			if s.TraceID != traceID {
				continue
			}
			services[s.Service]++
			if s.Name == "turn" {
				turn = &spans[i]
			}
		}
		return turn, services
	}
	var spans []sinkSpan
	deadline := time.Now().Add(30 * time.Second)
	for {
		spans = readSpans(t, spansFile)
		turn, services := want(spans)
		if turn != nil && services["vessel"] > 0 && services["sandboxd"] > 0 && services["egress"] > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s the trace has spans of %v (turn span: %v); all spans: %+v", services, turn != nil, spans)
		}
		time.Sleep(200 * time.Millisecond)
	}
	turn, services := want(spans)
	t.Logf("trace %s: spans by service %v", traceID, services)
	if turn.ParentID != appSpan || turn.Attributes["vessel.agent"] != "field-guide" || turn.Attributes["vessel.task_id"] == "" {
		t.Errorf("turn span %+v", turn)
	}
	names := map[string]bool{}
	for _, s := range spans {
		if s.TraceID == traceID {
			names[s.Service+": "+s.Name] = true
			for k, v := range s.Attributes {
				if strings.Contains(v, "alice") || strings.Contains(v, strings.TrimSpace(string(key))) {
					t.Errorf("span %s carries the owner or the key in %s", s.Name, k)
				}
			}
		}
	}
	for _, n := range []string{"vessel: execute_tool species", "sandboxd: sandbox run species", "egress: egress model POST"} {
		if !names[n] {
			t.Errorf("the trace lacks %q; it has %v", n, names)
		}
	}
}
