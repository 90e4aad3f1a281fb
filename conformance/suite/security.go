package suite

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
)

// checkSecurity reads the card's securitySchemes and securityRequirements
// (A2A 1.0 §7.3–7.4) and calls the agent with exactly the credentials its
// first requirement names, each where its scheme says (an HTTP bearer
// scheme in Authorization, an apiKey scheme in its header): the call is let
// in. With the bearer credential alone, a requirement not met, it is
// refused. It runs over each binding.
func checkSecurity(ctx context.Context, e *env, r *reporter) {
	const name = "card: security schemes honoured"
	res, err := e.get(ctx, "/agents/"+e.cfg.Agent+"/.well-known/agent-card.json", nil)
	if err != nil || res.status != http.StatusOK {
		r.fail(name, "card: %v (HTTP %d)", err, statusOf(res))
		return
	}
	card, err := res.json()
	if err != nil {
		r.fail(name, "%v", err)
		return
	}
	schemes := getObj(card, "securitySchemes")
	reqs := getList(card, "securityRequirements")
	if len(schemes) == 0 || len(reqs) == 0 {
		r.fail(name, "the card declares no securitySchemes or securityRequirements")
		return
	}
	first, _ := reqs[0].(map[string]any)
	names := make([]string, 0)
	for n := range getObj(first, "schemes") {
		names = append(names, n)
	}
	sort.Strings(names)
	hdr := map[string]string{}
	bearerOnly := map[string]string{}
	for _, n := range names {
		s := getObj(schemes, n)
		switch {
		case getObj(s, "httpAuthSecurityScheme") != nil:
			if !strings.EqualFold(getStr(getObj(s, "httpAuthSecurityScheme"), "scheme"), "bearer") {
				r.fail(name, "scheme %s: HTTP scheme %q, want Bearer", n, getStr(getObj(s, "httpAuthSecurityScheme"), "scheme"))
				return
			}
			hdr["Authorization"] = "Bearer " + e.cfg.Key
			bearerOnly["Authorization"] = hdr["Authorization"]
		case getObj(s, "apiKeySecurityScheme") != nil:
			k := getObj(s, "apiKeySecurityScheme")
			if getStr(k, "location") != "header" || getStr(k, "name") == "" {
				r.fail(name, "scheme %s: apiKey in %q named %q, want a header", n, getStr(k, "location"), getStr(k, "name"))
				return
			}
			hdr[getStr(k, "name")] = e.cfg.User
		default:
			r.fail(name, "scheme %s of the first requirement is neither HTTP bearer nor an apiKey header: %s", n, snippet(mustJSON(s)))
			return
		}
	}
	if len(hdr) < 2 || bearerOnly["Authorization"] == "" {
		r.fail(name, "the first requirement %v does not name a bearer and a user header scheme", names)
		return
	}
	none := auth{noKey: true, noUser: true}
	status, m, err := e.rpc(ctx, e.cfg.Agent, "ListTasks", obj{"pageSize": 1}, none, hdr)
	if err == nil {
		if code, msg, isErr := rpcError(m); isErr || status != http.StatusOK {
			err = fmt.Errorf("with the schemes' credentials: HTTP %d, error %d %q", status, code, msg)
		}
	}
	if err == nil {
		status, m, err = e.rpc(ctx, e.cfg.Agent, "ListTasks", obj{"pageSize": 1}, none, bearerOnly)
		if err == nil {
			if _, _, isErr := rpcError(m); !isErr {
				err = fmt.Errorf("the bearer scheme alone was let in (HTTP %d)", status)
			}
		}
	}
	r.check(name, err, fmt.Sprintf("requirement %v: let in with both, refused with the bearer alone", names))
}

func statusOf(res *httpResult) int {
	if res == nil {
		return 0
	}
	return res.status
}
