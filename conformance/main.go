// Command conformance checks that a server follows the AstralVessel A2A
// contract:
//
//	conformance URL KEY AGENT [--user U] [--other-user U] [--other-agent ID] [--timeout 60s] [--only REGEXP] [--public-url URL]
//
// It prints one line per check ("PASS|FAIL|SKIP name: detail") and then the
// summary line "N passed, M failed" (", K skipped" when some were skipped),
// and exits 1 when a check failed.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"

	"github.com/astraldeep/astralvessel-go/conformance/suite"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("conformance", flag.ContinueOnError)
	fs.SetOutput(stderr)
	user := fs.String("user", "conformance", "X-Vessel-User for the checks")
	otherUser := fs.String("other-user", "", "a second user of the same app (default USER-other)")
	otherAgent := fs.String("other-agent", "", "an agent the key may NOT call (for the 403 check; skipped when empty)")
	slow := fs.String("slow-text", suite.DefaultSlowText, "a question whose turn runs long enough to cancel")
	timeout := fs.Duration("timeout", 0, "bound of each check (default 60s)")
	mcpText := fs.String("mcp-text", "", "a message whose turn calls the agent's MCP tools (the mcp check; skipped when empty)")
	mcpExpect := fs.String("mcp-expect", "", "text the MCP turn's answer must hold")
	only := fs.String("only", "", "run only checks whose name matches this regular expression")
	publicURL := fs.String("public-url", "", "base URL the cards should advertise (default URL)")
	grpcAddress := fs.String("grpc-address", "", "host:port to reach the gRPC binding at (default the card's GRPC interface)")
	var pos []string
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			return 2
		}
		rest = fs.Args()
		if len(rest) == 0 {
			break
		}
		pos, rest = append(pos, rest[0]), rest[1:]
	}
	if len(pos) != 3 {
		fmt.Fprintln(stderr, "usage: conformance URL KEY AGENT [--user U] [--other-user U] [--other-agent ID] [--timeout D] [--only REGEXP] [--public-url URL] [--grpc-address HOST:PORT] [--mcp-text T --mcp-expect S]")
		return 2
	}
	cfg := suite.Config{URL: pos[0], Key: pos[1], Agent: pos[2], User: *user, OtherUser: *otherUser,
		OtherAgent: *otherAgent, SlowText: *slow, Timeout: *timeout, PublicURL: *publicURL, GRPCAddress: *grpcAddress,
		MCPText: *mcpText, MCPExpect: *mcpExpect}
	if *only != "" {
		re, err := regexp.Compile(*only)
		if err != nil {
			fmt.Fprintf(stderr, "conformance: --only: %v\n", err)
			return 2
		}
		cfg.Only = re
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	results := suite.Run(ctx, cfg, func(r suite.Result) { fmt.Fprintln(stdout, r) })
	sum := suite.Summarize(results)
	fmt.Fprintln(stdout, sum)
	if sum.Failed > 0 || ctx.Err() != nil {
		return 1
	}
	return 0
}
