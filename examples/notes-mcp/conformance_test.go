package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// buildServer builds this server and returns the binary's path.
func buildServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "notes-mcp")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, b)
	}
	return bin
}

// TestConformance checks the built server over real stdio, as sandboxd
// runs it: the handshake, a listing whose every tool has a name, a
// description and an object input schema, ping, an unknown tool as a
// JSON-RPC error, and an exit once stdin closes.
func TestConformance(t *testing.T) {
	bin := buildServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.Command(bin, "--dir", "notes")
	cmd.Dir = t.TempDir()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "conformance", Version: "1"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	init := cs.InitializeResult()
	if init.ServerInfo == nil || init.ServerInfo.Name != "notes" || init.ProtocolVersion == "" || init.Capabilities.Tools == nil {
		t.Errorf("initialize: %+v", init)
	}
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
		b, _ := json.Marshal(tl.InputSchema)
		var schema map[string]any
		if tl.Description == "" || json.Unmarshal(b, &schema) != nil || schema["type"] != "object" {
			t.Errorf("tool %s: description %q, input schema %s", tl.Name, tl.Description, b)
		}
	}
	slices.Sort(names)
	if strings.Join(names, ",") != "add_note,list_notes,read_note" {
		t.Errorf("tools: %v", names)
	}
	if err := cs.Ping(ctx, nil); err != nil {
		t.Errorf("ping: %v", err)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "drop_table", Arguments: map[string]any{}}); err == nil {
		t.Error("an unknown tool was answered")
	}
	if err := cs.Close(); err != nil {
		t.Errorf("close (the server should exit when its stdin closes): %v", err)
	}
	if cmd.ProcessState == nil || !cmd.ProcessState.Exited() {
		t.Errorf("the server did not exit: %v", cmd.ProcessState)
	}
}

// The server writes nothing but JSON-RPC lines to stdout, so a reader that
// frames by line (as the vessel does) never sees anything else.
func TestStdoutIsOnlyJSONRPC(t *testing.T) {
	bin := buildServer(t)
	cmd := exec.Command(bin)
	cmd.Dir = t.TempDir()
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	_, _ = io.WriteString(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n")
	_, _ = io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	_, _ = io.WriteString(in, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_notes","arguments":{}}}`+"\n")
	_, _ = io.WriteString(in, `{"jsonrpc":"2.0","id":3,"method":"ping"}`+"\n")
	sc := bufio.NewScanner(out)
	n := 0
	for n < 3 && sc.Scan() {
		var msg struct {
			JSONRPC string `json:"jsonrpc"`
		}
		if err := json.Unmarshal(sc.Bytes(), &msg); err != nil || msg.JSONRPC != "2.0" {
			t.Errorf("stdout line is not JSON-RPC: %q", sc.Text())
		}
		n++
	}
	in.Close() // and the server exits
	if sc.Scan() {
		t.Errorf("more on stdout: %q", sc.Text())
	}
	if n != 3 {
		t.Errorf("%d lines on stdout; want the answers to initialize, tools/call and ping", n)
	}
}
