// Package suite holds the conformance checks of the AstralVessel A2A
// contract: what any server claiming it must do, seen from outside over
// HTTP. The conformance binary and the local-stack end-to-end test run it.
package suite

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"

	"github.com/astraldeep/astralvessel-go/vessel/client"
)

// Config says which server and agent to check, and as whom.
type Config struct {
	URL   string // vessel base URL, e.g. http://127.0.0.1:8700
	Key   string // an app key granted the agent
	Agent string
	// User is the X-Vessel-User of the checks (default "conformance");
	// OtherUser is a second user of the same app (default User+"-other").
	User      string
	OtherUser string
	// OtherAgent is an agent the key is NOT granted; empty skips that check.
	OtherAgent string
	// SlowText asks for a turn that runs long enough to be cancelled; by
	// default a scripted-model marker.
	SlowText string
	// MCPText, when set, is a message whose turn calls the agent's MCP
	// tools; the answer must hold MCPExpect (checkMCP). Empty skips it.
	MCPText, MCPExpect string
	// Timeout bounds each check (default 60s).
	Timeout time.Duration
	// PublicURL is the base URL the cards should advertise (default URL),
	// for a server reached through another address than the one it
	// publishes.
	PublicURL string
	// Only, when set, runs only checks whose name matches.
	Only *regexp.Regexp
	// HTTPClient is used for every request (default: no timeout, bounded by
	// contexts).
	HTTPClient *http.Client
	// GRPCAddress, when set, replaces the address of the card's GRPC
	// interface (host:port), for a server reached through another address.
	GRPCAddress string
}

// DefaultSlowText selects the scripted model's long-running rule.
const DefaultSlowText = "Count slowly from one to five hundred, one number per line. #script:slow"

// Result is the outcome of one check.
type Result struct {
	Status string // PASS, FAIL or SKIP
	Name   string
	Detail string
}

func (r Result) String() string { return fmt.Sprintf("%s %s: %s", r.Status, r.Name, r.Detail) }

// Summary counts results.
type Summary struct{ Passed, Failed, Skipped int }

// Summarize counts the results by status.
func Summarize(rs []Result) Summary {
	var s Summary
	for _, r := range rs {
		switch r.Status {
		case "PASS":
			s.Passed++
		case "FAIL":
			s.Failed++
		default:
			s.Skipped++
		}
	}
	return s
}

// String is the summary line: "N passed, M failed" plus ", K skipped".
func (s Summary) String() string {
	line := fmt.Sprintf("%d passed, %d failed", s.Passed, s.Failed)
	if s.Skipped > 0 {
		line += fmt.Sprintf(", %d skipped", s.Skipped)
	}
	return line
}

// env is the state the checks share.
type env struct {
	cfg  Config
	base string
	hc   *http.Client
	id   atomic.Int64
	run  string // unique per run, in context ids
	me   auth
	// binding is the protocol binding the checks speak now ("" or
	// bindingJSONRPC: JSON-RPC); restSuffix is the HTTP+JSON interface's
	// path under /agents/<id>, from the card; bindings are the card's
	// bindings other than JSON-RPC that the per-binding checks run over again.
	binding    string
	restSuffix string
	bindings   []string
	// grpcAddr and grpcTenant are the card's GRPC interface; grpcConn its
	// connection, once dialled.
	grpcAddr, grpcTenant string
	grpcConn             *grpc.ClientConn
	// from the streaming turn, for later checks
	done       *turn
	transcript []client.Message
	out        func(Result)
}

func (e *env) nextID() string { return fmt.Sprintf("%s-%d", e.run, e.id.Add(1)) }

// reporter records the results of one check function.
type reporter struct {
	e    *env
	name string // default name for pass/fail/skip
	// prefix names the binding a per-binding check runs over again
	// ("HTTP+JSON "); empty on JSON-RPC.
	prefix string
}

func (r *reporter) add(status, name, format string, args ...any) {
	if name == "" {
		name = r.name
	}
	name = r.prefix + name
	if r.e.cfg.Only != nil && !r.e.cfg.Only.MatchString(name) {
		return
	}
	r.e.out(Result{Status: status, Name: name, Detail: fmt.Sprintf(format, args...)})
}

func (r *reporter) pass(name, format string, args ...any) { r.add("PASS", name, format, args...) }
func (r *reporter) fail(name, format string, args ...any) { r.add("FAIL", name, format, args...) }
func (r *reporter) skip(name, format string, args ...any) { r.add("SKIP", name, format, args...) }

// check reports pass when err is nil, else fail with err.
func (r *reporter) check(name string, err error, ok string) {
	if err != nil {
		r.fail(name, "%v", err)
		return
	}
	r.pass(name, "%s", ok)
}

type checkFn func(ctx context.Context, e *env, r *reporter)

type namedCheck struct {
	group string
	fn    checkFn
	// perBinding checks run over JSON-RPC, then again over each other
	// binding the card declares.
	perBinding bool
}

// Run runs every check in order and calls out with each result as it is
// known; it returns them all.
func Run(ctx context.Context, cfg Config, out func(Result)) []Result {
	if cfg.User == "" {
		cfg.User = "conformance"
	}
	if cfg.OtherUser == "" {
		cfg.OtherUser = cfg.User + "-other"
	}
	if cfg.SlowText == "" {
		cfg.SlowText = DefaultSlowText
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 60 * time.Second
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	}
	rb := make([]byte, 4)
	_, _ = rand.Read(rb)
	var results []Result
	e := &env{cfg: cfg, base: strings.TrimRight(cfg.URL, "/"), hc: hc, run: "conf" + hex.EncodeToString(rb),
		me: auth{key: cfg.Key, user: cfg.User}}
	e.out = func(r Result) {
		results = append(results, r)
		if out != nil {
			out(r)
		}
	}
	runChecks := func(list []namedCheck, prefix string) {
		for _, c := range list {
			cctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
			func() {
				defer cancel()
				defer func() {
					if p := recover(); p != nil {
						(&reporter{e: e, name: c.group, prefix: prefix}).fail("", "check panicked: %v", p)
					}
				}()
				c.fn(cctx, e, &reporter{e: e, name: c.group, prefix: prefix})
			}()
			if ctx.Err() != nil {
				return
			}
		}
	}
	defer func() {
		if e.grpcConn != nil {
			_ = e.grpcConn.Close()
		}
	}()
	runChecks(checks, "")
	var again []namedCheck
	for _, c := range checks {
		if c.perBinding {
			again = append(again, c)
		}
	}
	for _, b := range e.bindings {
		if ctx.Err() != nil {
			break
		}
		e.binding, e.done, e.transcript = b, nil, nil
		runChecks(again, b+" ")
	}
	return results
}
