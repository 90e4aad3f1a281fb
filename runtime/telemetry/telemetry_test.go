package telemetry

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

func TestParseLevel(t *testing.T) {
	for in, want := range map[string]zapcore.Level{"": zapcore.InfoLevel, "debug": zapcore.DebugLevel, " WARN ": zapcore.WarnLevel, "error": zapcore.ErrorLevel} {
		got, err := ParseLevel(in)
		if err != nil || got != want {
			t.Errorf("ParseLevel(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"verbose", "fatal", "panic"} {
		if _, err := ParseLevel(bad); err == nil {
			t.Errorf("ParseLevel(%q) accepted", bad)
		}
	}
}

func TestCleanTaskID(t *testing.T) {
	if got := CleanTaskID("0193-abc"); got != "0193-abc" {
		t.Errorf("plain id changed: %q", got)
	}
	if got := CleanTaskID("a\nb"); got != "invalid" {
		t.Errorf("id with a newline kept: %q", got)
	}
	if got := CleanTaskID(strings.Repeat("x", 500)); len(got) != MaxTaskIDLen {
		t.Errorf("long id not cut: %d bytes", len(got))
	}
}

func TestSlogBridge(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	sl := Slog(zap.New(core))
	sl.Debug("hidden")
	sl.Warn("store failing", "component", "store/sqlite")
	if logs.Len() != 1 {
		t.Fatalf("want 1 line (debug filtered by the zap level), got %d", logs.Len())
	}
	e := logs.All()[0]
	if e.Message != "store failing" || e.Level != zapcore.WarnLevel || e.ContextMap()["component"] != "store/sqlite" {
		t.Errorf("bridged line: %+v %v", e.Entry, e.ContextMap())
	}
}

func TestServeMetrics(t *testing.T) {
	if m, err := ServeMetrics("", NewRegistry(), zap.NewNop()); m != nil || err != nil {
		t.Fatalf("empty address must serve nothing: %v %v", m, err)
	}
	reg := NewRegistry()
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "test_things_total", Help: "things"})
	reg.MustRegister(c)
	c.Add(3)
	m, err := ServeMetrics("127.0.0.1:0", reg, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	resp, err := http.Get("http://" + m.Addr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), "test_things_total 3") || !strings.Contains(string(b), "go_goroutines") {
		t.Errorf("scrape lacks the series:\n%s", b)
	}
	resp, err = http.Get("http://" + m.Addr().String() + "/other")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("/other: %d, want 404", resp.StatusCode)
	}
	// A handler added while serving (the vessel's operator API).
	m.Handle("/other", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) }))
	resp, err = http.Get("http://" + m.Addr().String() + "/other")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTeapot {
		t.Errorf("/other after Handle: %d", resp.StatusCode)
	}
}
