package servicetest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// notesServers counts live processes of the notes MCP server at bin.
func notesServers(bin string) int {
	n := 0
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.HasPrefix(string(b), bin+"\x00") {
			n++
		}
	}
	return n
}

// A stdio MCP server the package declares runs in the real sandboxd: the
// turn's two calls reach one confined server process, which keeps its
// notes in the turn's workspace, and is gone when the turn has ended.
func TestRealSandboxStdioMCP(t *testing.T) {
	realSandboxStdioMCP(t, `tools = ["add_note", "list_notes"]`, "notes__add_note,notes__list_notes")
}

// The same server declared with tools = ["*"]: the vessel lists it in the
// sandbox when the turn is admitted and offers every tool it lists
// (read_note too); the turn's calls still reach one process, and the
// listing is the only other one.
func TestRealSandboxStdioMCPStar(t *testing.T) {
	realSandboxStdioMCP(t, `tools = ["*"]`, "notes__add_note,notes__list_notes,notes__read_note")
}

func realSandboxStdioMCP(t *testing.T, toolsLine, wantTools string) {
	var bin string
	s := startStackWith(t, stackConfig{pkg: func(t *testing.T, dir string) {
		bin = filepath.Join(dir, "bin", "notes-mcp")
		build(t, "../../examples/notes-mcp", ".", bin)
		write(t, filepath.Join(dir, "tools/notes.toml"), `name = "notes"
[mcp]
command = ["{package}/bin/notes-mcp", "--dir", "notes"]
`+toolsLine+`
scope = "tools:files"
`)
	}})
	cl := s.client()
	previews := map[string]string{}
	var last a2a.TaskState
	for ev, err := range cl.SendStreamingMessage(alice(), &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("#script:notes"))}) {
		if err != nil {
			t.Fatal(err)
		}
		if su, ok := ev.(*a2a.TaskStatusUpdateEvent); ok {
			last = su.Status.State
		}
		if d := dataOf(ev); d["type"] == "turn.started" {
			var mcpTools []string
			list, _ := d["tools"].([]any)
			for _, n := range list {
				if n, _ := n.(string); strings.HasPrefix(n, "notes__") {
					mcpTools = append(mcpTools, n)
				}
			}
			if got := strings.Join(mcpTools, ","); got != wantTools {
				t.Errorf("the turn was offered %s, want %s", got, wantTools)
			}
		} else if d["type"] == "tool.finished" {
			previews[d["name"].(string)], _ = d["preview"].(string)
			if d["ok"] != true {
				logs, _ := os.ReadFile(s.logs.Name())
				t.Fatalf("MCP tool failed: %v\n%s", d, logs)
			}
		}
	}
	if previews["notes__add_note"] != "saved survey" || !strings.Contains(previews["notes__list_notes"], `"survey"`) {
		t.Fatalf("previews: %v", previews)
	}
	if last != a2a.TaskStateCompleted {
		t.Fatalf("the turn ended %s", last)
	}
	deadline := time.Now().Add(10 * time.Second)
	for notesServers(bin) > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if n := notesServers(bin); n != 0 {
		t.Fatalf("%d notes servers outlived the turn", n)
	}
	// sandboxd logs one line per served process, the listing's and the
	// turn's, once the process's stream has ended (which can come just after
	// the process is gone).
	served := func() (int, []byte) {
		logs, _ := os.ReadFile(s.logs.Name())
		return strings.Count(string(logs), `"tool":"mcp:notes"`), logs
	}
	for n, _ := served(); n < 2 && time.Now().Before(deadline.Add(5*time.Second)); n, _ = served() {
		time.Sleep(100 * time.Millisecond)
	}
	if n, logs := served(); n != 2 {
		t.Errorf("%d served notes processes, want 2 (the listing, then one for both calls of the turn):\n%s", n, logs)
	}
}
