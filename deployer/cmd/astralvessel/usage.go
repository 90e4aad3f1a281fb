package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/astraldeep/astralvessel-go/deployer/compose"
	usagelog "github.com/astraldeep/astralvessel-go/runtime/usage"
)

func init() {
	register(&command{
		name:    "usage",
		usage:   "usage [LOG...] [--from T] [--to T] [--by app|user|agent|route] [--json]",
		summary: "sum the vessel's usage log(s) by app, user, agent or model route over a time range",
		help: "LOG is a usage log the vessel writes (--usage-log), read with its rotated files;\n" +
			"without LOG, $VESSEL_USAGE_LOG, else records/vessel/usage.jsonl in the folder astralvessel deploy\n" +
			"wrote (the current one). T is RFC 3339 (2026-12-01T10:00:00Z) or a date (2026-12-01, UTC);\n" +
			"records with from <= time < to count. Malformed lines are reported on stderr and skipped.",
		run: runUsage,
	})
}

// parseWhen reads an RFC 3339 time or a date (UTC midnight); "" is zero.
func parseWhen(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%q is neither an RFC 3339 time nor a date (YYYY-MM-DD)", s)
}

func runUsage(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("usage", stderr)
	fromS := fs.String("from", "", "count records at or after this time (default: all)")
	toS := fs.String("to", "", "count records before this time (default: all)")
	byS := fs.String("by", "agent", "group by app, user (the owner, <app>/<user>), agent or route (the model route)")
	asJSON := fs.Bool("json", false, "print the summary as JSON")
	pos, code, ok := parseFlags(fs, args, stdout, stderr)
	if !ok {
		return code
	}
	by, err := usagelog.ParseGroup(*byS)
	if err != nil {
		fmt.Fprintf(stderr, "usage: --by: %v\n", err)
		return 2
	}
	from, err := parseWhen(*fromS)
	if err != nil {
		fmt.Fprintf(stderr, "usage: --from: %v\n", err)
		return 2
	}
	to, err := parseWhen(*toS)
	if err != nil {
		fmt.Fprintf(stderr, "usage: --to: %v\n", err)
		return 2
	}
	if !from.IsZero() && !to.IsZero() && !from.Before(to) {
		fmt.Fprintln(stderr, "usage: --from must be before --to")
		return 2
	}
	if len(pos) == 0 {
		if p := strings.TrimSpace(os.Getenv("VESSEL_USAGE_LOG")); p != "" {
			pos = []string{p}
		}
	}
	if len(pos) == 0 {
		// In the folder astralvessel deploy wrote, its usage log.
		if _, err := os.Stat(deployedUsageLog); err == nil {
			pos = []string{deployedUsageLog}
		}
	}
	if len(pos) == 0 {
		fmt.Fprintln(stderr, "usage: name a usage log, set VESSEL_USAGE_LOG, or run this in the folder astralvessel deploy wrote (its "+
			deployedUsageLog+")")
		usageError("usage", stderr)
		return 2
	}
	s, err := usagelog.SummariseFiles(pos, from, to, by)
	if err != nil {
		fmt.Fprintf(stderr, "%v\n", err)
		if errors.Is(err, os.ErrPermission) {
			fmt.Fprintf(stderr, "a deployment's records are readable by the group %s (gid %d): add yourself to it (docs/operations.md)\n",
				compose.OperatorGroup, compose.OperatorGID)
		}
		return 1
	}
	for _, b := range s.Bad {
		fmt.Fprintf(stderr, "skipped %s\n", b)
	}
	if s.BadCount > int64(len(s.Bad)) {
		fmt.Fprintf(stderr, "skipped %d more malformed lines\n", s.BadCount-int64(len(s.Bad)))
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(map[string]any{"by": by, "records": s.Records, "malformed": s.BadCount, "rows": s.Rows}); err != nil {
			fmt.Fprintf(stderr, "usage: %v\n", err)
			return 1
		}
		return 0
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "%s\tturns\ttokens_in\ttokens_out\tsteps\ttool_calls\tfiles\tduration_s\tstatuses\n", strings.ToUpper(string(by)))
	for _, r := range s.Rows {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%.1f\t%s\n", r.Key, r.Turns, r.TokensIn, r.TokensOut, r.Steps, r.ToolCalls,
			r.Files, float64(r.DurationMS)/1000, statuses(r.Statuses))
	}
	if err := tw.Flush(); err != nil {
		fmt.Fprintf(stderr, "usage: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "%d turn(s)", s.Records)
	if s.BadCount > 0 {
		fmt.Fprintf(stdout, ", %d malformed line(s) skipped", s.BadCount)
	}
	fmt.Fprintln(stdout)
	return 0
}

// deployedUsageLog is the usage log of a generated deployment, relative to
// the folder astralvessel deploy wrote.
var deployedUsageLog = filepath.Join(compose.RecordsDir, "vessel", "usage.jsonl")

func statuses(m map[string]int64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, m[k])
	}
	return strings.Join(parts, ",")
}
