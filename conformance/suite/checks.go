package suite

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// maxBody is the spec's request size limit.
const maxBody = 16_000_000

var checks = []namedCheck{
	{"card", checkCard, false},
	{"card", checkCardAddress, false},
	{"health", checkHealth, false},
	{"agents", checkAgents, false},
	{"manifest", checkManifest, false},
	{"auth", checkAuth, false},
	{"limit", checkLimit, false},
	{"auth", checkRESTRefusals, false},
	{"auth", checkGRPCRefusals, false},
	{"jsonrpc", checkJSONRPC, false},
	{"jsonrpc", checkEnvelope, false},
	{"card", checkSecurity, true},
	{"stream", checkStream, true},
	{"send", checkSend, true},
	{"transcript", checkTranscript, true},
	{"reject", checkRejections, true},
	{"cancel", checkCancel, true},
	{"tasks", checkTasks, true},
	{"approval", checkApproval, true},
	{"mcp", checkMCP, false},
}

func joinErrs(errs []string) error {
	if len(errs) == 0 {
		return nil
	}
	return errors.New(strings.Join(errs, "; "))
}

func strList(v any) []string {
	var out []string
	l, _ := v.([]any)
	for _, e := range l {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func first(l []string) string {
	if len(l) == 0 {
		return "(none)"
	}
	return l[0]
}

// compact folds runs of one event: [turn.started text.delta×12 ...].
func compact(evs []string) []string {
	var out []string
	for i := 0; i < len(evs); {
		j := i
		for j < len(evs) && evs[j] == evs[i] {
			j++
		}
		if j-i > 1 {
			out = append(out, fmt.Sprintf("%s×%d", evs[i], j-i))
		} else {
			out = append(out, evs[i])
		}
		i = j
	}
	return out
}

func mustJSON(v any) []byte { b, _ := json.Marshal(v); return b }
