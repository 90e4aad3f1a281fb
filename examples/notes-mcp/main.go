// Command notes-mcp is an example MCP server for AstralVessel agents: it
// keeps notes as files in a folder of the turn's workspace and speaks MCP
// over stdio (the official Go SDK). An agent package declares it in
// tools/notes.toml; sandboxd runs it confined, with the workspace as its
// only writable place (docs/mcp.md).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxNote bounds one note's text.
const maxNote = 64 << 10

var titlePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9 _-]{0,63}$`)

type notes struct{ dir string }

type addArgs struct {
	Title string `json:"title" jsonschema:"the note's title: letters, digits, space, _ and -"`
	Text  string `json:"text" jsonschema:"the note's text"`
}

type readArgs struct {
	Title string `json:"title" jsonschema:"the title of the note to read"`
}

type listResult struct {
	Titles []string `json:"titles"`
}

func (n *notes) path(title string) (string, error) {
	if !titlePattern.MatchString(title) {
		return "", fmt.Errorf("invalid title %q: use 1 to 64 letters, digits, space, _ and -", title)
	}
	return filepath.Join(n.dir, title+".md"), nil
}

func (n *notes) add(_ context.Context, _ *mcp.CallToolRequest, a addArgs) (*mcp.CallToolResult, any, error) {
	p, err := n.path(a.Title)
	if err != nil {
		return nil, nil, err
	}
	if len(a.Text) > maxNote {
		return nil, nil, fmt.Errorf("a note may have %d bytes, not %d", maxNote, len(a.Text))
	}
	if err := os.MkdirAll(n.dir, 0o700); err != nil {
		return nil, nil, err
	}
	if err := os.WriteFile(p, []byte(a.Text), 0o600); err != nil {
		return nil, nil, err
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "saved " + a.Title}}}, nil, nil
}

func (n *notes) read(_ context.Context, _ *mcp.CallToolRequest, a readArgs) (*mcp.CallToolResult, any, error) {
	p, err := n.path(a.Title)
	if err != nil {
		return nil, nil, err
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, fmt.Errorf("there is no note %q", a.Title)
	}
	if err != nil {
		return nil, nil, err
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil, nil
}

func (n *notes) list(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, listResult, error) {
	entries, err := os.ReadDir(n.dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, listResult{}, err
	}
	out := listResult{Titles: []string{}}
	for _, e := range entries {
		if t, ok := strings.CutSuffix(e.Name(), ".md"); ok && e.Type().IsRegular() {
			out.Titles = append(out.Titles, t)
		}
	}
	sort.Strings(out.Titles)
	return nil, out, nil
}

// newServer builds the server over the notes in dir.
func newServer(dir string) *mcp.Server {
	n := &notes{dir: dir}
	s := mcp.NewServer(&mcp.Implementation{Name: "notes", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "add_note", Description: "Save a note under a title (replacing one of the same title)."}, n.add)
	mcp.AddTool(s, &mcp.Tool{Name: "read_note", Description: "Read the note with a title."}, n.read)
	mcp.AddTool(s, &mcp.Tool{Name: "list_notes", Description: "List the titles of the saved notes."}, n.list)
	return s
}

func main() {
	dir := flag.String("dir", "notes", "the folder of the notes, relative to the working directory (the turn's workspace)")
	flag.Parse()
	log.SetFlags(0)
	if err := newServer(*dir).Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
