// Checks of the discovery endpoints: agent card, its signature, health,
// the agent list and the manifest.

package suite

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/astraldeep/astralvessel-go/vessel/client"
	"github.com/astraldeep/astralvessel-go/vessel/client/cardsig"
)

func checkCard(ctx context.Context, e *env, r *reporter) {
	res, err := e.get(ctx, "/agents/"+e.cfg.Agent+"/.well-known/agent-card.json", nil)
	if err != nil {
		r.fail("card: served without auth", "%v", err)
		return
	}
	if res.status != 200 {
		r.fail("card: served without auth", "HTTP %d: %s", res.status, snippet(res.body))
		return
	}
	card, err := res.json()
	if err != nil {
		r.fail("card: served without auth", "%v", err)
		return
	}
	r.pass("card: served without auth", "HTTP 200, %s", res.header.Get("Content-Type"))

	var errs []string
	for _, f := range []string{"name", "description", "version"} {
		if getStr(card, f) == "" {
			errs = append(errs, "no "+f)
		}
	}
	if getStr(card, "name") != e.cfg.Agent {
		errs = append(errs, fmt.Sprintf("name %q is not the agent id", getStr(card, "name")))
	}
	if s, _ := getObj(card, "capabilities")["streaming"].(bool); !s {
		errs = append(errs, "capabilities.streaming is not true")
	}
	if getStr(getObj(card, "provider"), "organization") == "" {
		errs = append(errs, "no provider.organization")
	}
	r.check("card: fields", joinErrs(errs), "name, description, version, capabilities.streaming, provider")

	errs = nil
	in, out := strList(card["defaultInputModes"]), strList(card["defaultOutputModes"])
	for _, m := range []string{"text/plain", client.TranscriptMediaType} {
		if !slices.Contains(in, m) {
			errs = append(errs, "defaultInputModes lacks "+m)
		}
	}
	for _, m := range []string{client.MarkdownMediaType, client.TranscriptMediaType} {
		if !slices.Contains(out, m) {
			errs = append(errs, "defaultOutputModes lacks "+m)
		}
	}
	r.check("card: media types", joinErrs(errs), fmt.Sprintf("in %v, out %v", in, out))

	errs = nil
	ifaces := getList(card, "supportedInterfaces")
	if len(ifaces) == 0 {
		errs = append(errs, "no supportedInterfaces")
	} else if i0, ok := ifaces[0].(map[string]any); ok {
		if u := getStr(i0, "url"); !strings.HasSuffix(strings.TrimRight(u, "/"), "/agents/"+e.cfg.Agent) {
			errs = append(errs, fmt.Sprintf("interface url %q does not end in /agents/%s", u, e.cfg.Agent))
		}
		if b := getStr(i0, "protocolBinding"); b != "JSONRPC" {
			errs = append(errs, fmt.Sprintf("protocolBinding %q, want JSONRPC", b))
		}
		if v := getStr(i0, "protocolVersion"); v != "1.0" {
			errs = append(errs, fmt.Sprintf("protocolVersion %q, want 1.0", v))
		}
	}
	r.check("card: interface", joinErrs(errs), "JSONRPC 1.0 at /agents/"+e.cfg.Agent)
	checkBindings(e, r, ifaces)
	checkSignature(ctx, e, r, res.body, card)

	errs = nil
	skills := getList(card, "skills")
	var skill obj
	if len(skills) > 0 {
		skill, _ = skills[0].(map[string]any)
	}
	if skill == nil {
		errs = append(errs, "no skills")
	} else {
		if getStr(skill, "id") != e.cfg.Agent {
			errs = append(errs, fmt.Sprintf("skill id %q is not the agent id", getStr(skill, "id")))
		}
		if getStr(skill, "name") == "" {
			errs = append(errs, "skill has no name")
		}
		tags := strList(skill["tags"])
		if !slices.Contains(tags, "astralvessel") {
			errs = append(errs, "skill tags lack astralvessel")
		}
		scope := ""
		for _, t := range tags {
			if after, ok := strings.CutPrefix(t, "scope:"); ok {
				scope = after
			}
		}
		if scope != "" && !strings.HasPrefix(scope, "tools:") {
			errs = append(errs, fmt.Sprintf("scope tag %q is not a tools: scope", scope))
		}
	}
	r.check("card: skill", joinErrs(errs), fmt.Sprintf("id %s, name %q, tags %v", getStr(skill, "id"), getStr(skill, "name"), strList(skill["tags"])))
}

// checkSignature verifies a signed card against the server's JWKS
// (cardsig.JWKSPath); an unsigned card is skipped.
func checkSignature(ctx context.Context, e *env, r *reporter, body []byte, card obj) {
	const name = "card: signature verifies"
	if len(getList(card, "signatures")) == 0 {
		r.skip(name, "the card is not signed")
		return
	}
	res, err := e.get(ctx, cardsig.JWKSPath, nil)
	if err != nil {
		r.fail(name, "%v", err)
		return
	}
	if res.status != 200 {
		r.fail(name, "the card is signed but GET %s is HTTP %d", cardsig.JWKSPath, res.status)
		return
	}
	kid, err := cardsig.Verify(body, res.body)
	r.check(name, err, "JWS over the RFC 8785 card, kid "+kid)
}

func checkHealth(ctx context.Context, e *env, r *reporter) {
	res, err := e.get(ctx, "/health", nil)
	if err != nil {
		r.fail("health", "%v", err)
		return
	}
	m, err := res.json()
	if err != nil || res.status != 200 {
		r.fail("health", "HTTP %d: %s", res.status, snippet(res.body))
		return
	}
	ok, isBool := m["ok"].(bool)
	agents := getObj(m, "agents")
	ready, _ := agents[e.cfg.Agent].(bool)
	if !isBool || !ok || agents == nil || !ready {
		r.fail("health", "want {ok: true, agents: {%s: true}}, got %s", e.cfg.Agent, snippet(res.body))
		return
	}
	r.pass("health", "ok=%v, %s ready", ok, e.cfg.Agent)
}

func checkAgents(ctx context.Context, e *env, r *reporter) {
	res, err := e.get(ctx, "/v1/agents", &e.me)
	if err != nil {
		r.fail("agents: list", "%v", err)
		return
	}
	m, err := res.json()
	if err != nil || res.status != 200 {
		r.fail("agents: list", "HTTP %d: %s", res.status, snippet(res.body))
	} else {
		var found obj
		for _, a := range getList(m, "agents") {
			if ao, ok := a.(map[string]any); ok && getStr(ao, "id") == e.cfg.Agent {
				found = ao
			}
		}
		var errs []string
		if found == nil {
			errs = append(errs, e.cfg.Agent+" not listed")
		} else {
			for _, f := range []string{"id", "name", "description", "card_url", "available"} {
				if _, ok := found[f]; !ok {
					errs = append(errs, "no "+f)
				}
			}
		}
		r.check("agents: list", joinErrs(errs), fmt.Sprintf("%d agents, %s with id, name, description, card_url, available", len(getList(m, "agents")), e.cfg.Agent))
	}
	res, err = e.get(ctx, "/v1/agents", nil)
	if err != nil {
		r.fail("agents: needs auth", "%v", err)
		return
	}
	if res.status != 401 {
		r.fail("agents: needs auth", "without a key: HTTP %d, want 401", res.status)
		return
	}
	r.pass("agents: needs auth", "401 without a key")
}

func checkManifest(ctx context.Context, e *env, r *reporter) {
	path := "/agents/" + e.cfg.Agent + "/manifest"
	res, err := e.get(ctx, path, &e.me)
	if err != nil {
		r.fail("manifest: with auth", "%v", err)
	} else if m, err := res.json(); err != nil || res.status != 200 {
		r.fail("manifest: with auth", "HTTP %d: %s", res.status, snippet(res.body))
	} else if !bytes.Contains(res.body, []byte(`"`+e.cfg.Agent+`"`)) {
		r.fail("manifest: with auth", "the summary does not name the agent id: %s", snippet(res.body))
	} else {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		r.pass("manifest: with auth", "HTTP 200, fields %v", keys)
	}
	res, err = e.get(ctx, path, nil)
	if err != nil {
		r.fail("manifest: needs auth", "%v", err)
		return
	}
	if res.status != 401 {
		r.fail("manifest: needs auth", "without a key: HTTP %d, want 401", res.status)
		return
	}
	r.pass("manifest: needs auth", "401 without a key")
}
