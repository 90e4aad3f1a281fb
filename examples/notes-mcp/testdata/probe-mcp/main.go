// Command probe-mcp is a hostile MCP server for sandboxd's and the
// vessel's tests: its tools try what a confined process must not manage
// (write outside the workspace, dial, read another turn's files), leave a
// child behind, flood stdout, break the protocol or never answer.
package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type pathArgs struct {
	Path string `json:"path,omitempty"`
}

type sizeArgs struct {
	Bytes int `json:"bytes"`
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// outcome prints ALLOWED or BLOCKED errno=N, as sandboxd's probe.py does.
func outcome(err error) *mcp.CallToolResult {
	if err == nil {
		return text("ALLOWED")
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return text(fmt.Sprintf("BLOCKED errno=%d %v", int(errno), err))
	}
	return text("BLOCKED " + err.Error())
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "sleep" {
		time.Sleep(time.Hour)
		return
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "probe", Version: "1"}, nil)
	add := func(name string, h mcp.ToolHandlerFor[pathArgs, any]) {
		mcp.AddTool(s, &mcp.Tool{Name: name, Description: name}, h)
	}
	add("whoami", func(context.Context, *mcp.CallToolRequest, pathArgs) (*mcp.CallToolResult, any, error) {
		wd, _ := os.Getwd()
		return text(fmt.Sprintf("uid=%d pid=%d wd=%s", os.Getuid(), os.Getpid(), wd)), nil, nil
	})
	add("write", func(_ context.Context, _ *mcp.CallToolRequest, a pathArgs) (*mcp.CallToolResult, any, error) {
		return outcome(os.WriteFile(a.Path, []byte("x"), 0o644)), nil, nil
	})
	add("read", func(_ context.Context, _ *mcp.CallToolRequest, a pathArgs) (*mcp.CallToolResult, any, error) {
		_, err := os.ReadFile(a.Path)
		return outcome(err), nil, nil
	})
	add("dial", func(_ context.Context, _ *mcp.CallToolRequest, a pathArgs) (*mcp.CallToolResult, any, error) {
		c, err := net.DialTimeout("tcp", a.Path, 2*time.Second)
		if err == nil {
			c.Close()
		}
		return outcome(err), nil, nil
	})
	add("child", func(context.Context, *mcp.CallToolRequest, pathArgs) (*mcp.CallToolResult, any, error) {
		self, err := os.Executable()
		if err != nil {
			return nil, nil, err
		}
		// A session or group of its own is refused by the sandbox's
		// seccomp filter; the child stays in the server's group, and
		// outlives the server if only the server is killed.
		cmd := exec.Command(self, "sleep")
		if err := cmd.Start(); err != nil {
			return nil, nil, err
		}
		return text(fmt.Sprintf("child=%d", cmd.Process.Pid)), nil, nil
	})
	add("hang", func(ctx context.Context, _ *mcp.CallToolRequest, _ pathArgs) (*mcp.CallToolResult, any, error) {
		select {} // never answers, not even to a cancellation
	})
	add("garbage", func(context.Context, *mcp.CallToolRequest, pathArgs) (*mcp.CallToolResult, any, error) {
		fmt.Fprintln(os.Stdout, `{"jsonrpc":"2.0","id":`+strings.Repeat("[", 64)+`}`)
		fmt.Fprintln(os.Stdout, "this is not JSON-RPC")
		select {}
	})
	mcp.AddTool(s, &mcp.Tool{Name: "flood", Description: "flood"}, func(_ context.Context, _ *mcp.CallToolRequest, a sizeArgs) (*mcp.CallToolResult, any, error) {
		return text(strings.Repeat("x", a.Bytes)), nil, nil
	})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
