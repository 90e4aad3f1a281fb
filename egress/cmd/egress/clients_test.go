package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWebClientsFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	base := map[string]string{"VESSEL_UPSTREAM_MODEL_URL": "https://m.test/v1", "VESSEL_EGRESS_TOKEN": "t"}
	with := func(path string) func(string) string {
		m := map[string]string{"VESSEL_EGRESS_WEB_CLIENTS_FILE": path}
		for k, v := range base {
			m[k] = v
		}
		return env(m)
	}
	good := write("good.json", `{"clients": [{"name": "agent.field-guide", "deny": ["ads.example.org"]}, {"name": "search", "allow": ["*.engine.example"], "mode": "enforce"}]}`)
	c, err := loadConfig(nil, with(good))
	if err != nil || c.clients.Len() != 2 {
		t.Fatalf("good file: %v", err)
	}
	if c, err := loadConfig(nil, env(base)); err != nil || c.clients.Len() != 0 {
		t.Fatalf("no file: %v", err)
	}
	for body, want := range map[string]string{
		`{"clients": []}`: "lists no client",
		`{"clients": [{"name": "a", "allow": ["*.com"]}]}`:          "public suffix",
		`{"clients": [{"name": "a", "mode": "audit"}]}`:             `unknown mode "audit"`,
		`{"clients": [{"name": "a", "alow": ["x.example"]}]}`:       "unknown field",
		`{"clients": [{"name": "a"}, {"name": "a"}]}`:               "listed twice",
		`{"clients": [{"name": "a:b"}]}`:                            "without colons",
		`{"clients": [{"name": "a"}]} {"clients": [{"name": "b"}]}`: "more than one",
		`not json`: "web clients",
	} {
		_, err := loadConfig(nil, with(write("bad.json", body)))
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "VESSEL_EGRESS_WEB_CLIENTS_FILE") {
			t.Errorf("%s: err = %v, want %q", body, err, want)
		}
	}
	if _, err := loadConfig(nil, with(filepath.Join(dir, "missing.json"))); err == nil {
		t.Error("a missing file was accepted")
	}
}
