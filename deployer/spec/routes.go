package spec

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/astraldeep/astralvessel-go/runtime/routes"
)

// The route types and the route check live in runtime/routes, which the
// egress shares; these names keep spec's API.
type (
	ModelRoute    = routes.ModelRoute
	RouteProblem  = routes.RouteProblem
	ResolvedRoute = routes.ResolvedRoute
)

const (
	AuthBearer                    = routes.AuthBearer
	AuthAPIKey                    = routes.AuthAPIKey
	AuthNone                      = routes.AuthNone
	DefaultRoute                  = routes.DefaultRoute
	RouteHeader                   = routes.RouteHeader
	TokenParamMaxTokens           = routes.TokenParamMaxTokens
	TokenParamMaxCompletionTokens = routes.TokenParamMaxCompletionTokens
	MaxRoutes                     = routes.MaxRoutes
	MaxRouteQuery                 = routes.MaxRouteQuery
	MaxRouteHeaders               = routes.MaxRouteHeaders
	MaxRouteValueBytes            = routes.MaxRouteValueBytes
	ModelKeyVar                   = routes.ModelKeyVar
)

// CheckRouteName is routes.CheckRouteName.
func CheckRouteName(name string) string { return routes.CheckRouteName(name) }

// ResolveRoute is routes.ResolveRoute: validate and the egress run the same check.
func ResolveRoute(name string, r ModelRoute, hasKey bool) (*ResolvedRoute, []RouteProblem) {
	return routes.ResolveRoute(name, r, hasKey)
}

// RouteHeaderProblem is routes.RouteHeaderProblem.
func RouteHeaderProblem(h, v string) string { return routes.RouteHeaderProblem(h, v) }

// ParseRoutes is routes.ParseRoutes.
func ParseRoutes(s string) (map[string]ModelRoute, error) { return routes.ParseRoutes(s) }

// routes checks [models] and the agents' model_route choices.
func (v *validator) routes() {
	if len(v.d.Models) > MaxRoutes {
		v.c.add("models", "%d routes; at most %d", len(v.d.Models), MaxRoutes)
	}
	for _, n := range slices.Sorted(maps.Keys(v.d.Models)) {
		f := "models." + n
		if msg := CheckRouteName(n); msg != "" {
			v.c.add(f, "%s", msg)
			continue
		}
		r := v.d.Models[n]
		if r.URL != "" && !v.resolve(f+".url", &r.URL) {
			continue
		}
		if name, ok := strings.CutPrefix(r.Key, "env:"); ok && envNamePattern.MatchString(name) {
			r.KeyEnv = name
		}
		_, ps := ResolveRoute(n, r, false)
		for _, p := range ps {
			v.c.add(f+"."+p.Key, "%s", p.Msg)
		}
		if msg := checkProvider(r.Provider); msg != "" {
			v.c.add(f+".provider", "%s", msg)
		}
		if r.SendBack != nil {
			if msg := checkSendBack(*r.SendBack); msg != "" {
				v.c.add(f+".send_back", "%s", msg)
			}
		}
		switch r.TokenParam {
		case "":
			r.TokenParam = ProfileOf(r.Provider).TokenParam
		case TokenParamMaxTokens, TokenParamMaxCompletionTokens:
		default:
			v.c.add(f+".token_param", "unknown token parameter %q; allowed: %s, %s", r.TokenParam, TokenParamMaxTokens, TokenParamMaxCompletionTokens)
		}
		v.d.Models[n] = r
	}
	e := &v.d.Egress
	if msg := checkProvider(e.UpstreamProvider); msg != "" {
		v.c.add("egress.upstream_provider", "%s", msg)
	}
	if e.UpstreamSendBack != nil {
		if msg := checkSendBack(*e.UpstreamSendBack); msg != "" {
			v.c.add("egress.upstream_send_back", "%s", msg)
		}
	}
	if e.UpstreamTokenParam != "" && e.UpstreamTokenParam != TokenParamMaxTokens && e.UpstreamTokenParam != TokenParamMaxCompletionTokens {
		v.c.add("egress.upstream_token_param", "unknown token parameter %q; allowed: %s, %s", e.UpstreamTokenParam, TokenParamMaxTokens, TokenParamMaxCompletionTokens)
	}
	for i, a := range v.d.Agents {
		if a.ModelRoute == "" || a.ModelRoute == DefaultRoute {
			continue
		}
		if _, ok := v.d.Models[a.ModelRoute]; !ok {
			v.c.add(fmt.Sprintf("agents[%d].model_route", i), "unknown route %q; define [models.%s] or leave model_route out for [egress] upstream_url", a.ModelRoute, a.ModelRoute)
		}
	}
}

// upstream checks [egress] upstream_url and upstream_auth as the route
// "default", with the egress's own check (ResolveRoute): what it would
// refuse at start is refused here, with the line.
func (v *validator) upstream() {
	e := &v.d.Egress
	if e.UpstreamURL == "" {
		v.c.add("egress.upstream_url", "required: the OpenAI-compatible model endpoint, e.g. \"env:VESSEL_UPSTREAM_MODEL_URL\"")
		return
	}
	if !v.resolve("egress.upstream_url", &e.UpstreamURL) {
		return
	}
	_, ps := ResolveRoute(DefaultRoute, e.defaultRoute(), true)
	for _, p := range ps {
		switch p.Key {
		case "url":
			v.c.add("egress.upstream_url", "%s", strings.Replace(p.Msg, "allow_http = true (allow_http_upstream for [egress])", "allow_http_upstream = true", 1))
		case "auth":
			v.c.add("egress.upstream_auth", "%s", p.Msg)
		}
	}
}

// defaultRoute is [egress] upstream_url as a route (its key comes from
// VESSEL_MODEL_KEY, so its presence is not known here).
func (e *Egress) defaultRoute() ModelRoute {
	return ModelRoute{URL: e.UpstreamURL, Auth: e.UpstreamAuth, AllowHTTP: e.AllowHTTPUpstream}
}

// TokenParam is the parameter name of the token limit on the agent's route.
func (d *Deployment) TokenParam(a *Agent) string {
	if r, ok := d.Models[a.ModelRoute]; ok && r.TokenParam != "" {
		return r.TokenParam
	}
	if a.ModelRoute == "" || a.ModelRoute == DefaultRoute {
		if d.Egress.UpstreamTokenParam != "" {
			return d.Egress.UpstreamTokenParam
		}
	}
	return ProfileOf(d.Provider(a)).TokenParam
}

// Route is the route name the agent's model requests carry.
func (a *Agent) Route() string { return routes.Name(a.ModelRoute) }

// EncodeRoutes is the egress's VESSEL_EGRESS_ROUTES: the [models] routes,
// URLs resolved, keys named by variable only.
func (d *Deployment) EncodeRoutes() string {
	if len(d.Models) == 0 {
		return ""
	}
	b, _ := json.Marshal(d.Models) // strings and maps of strings: cannot fail
	return string(b)
}

// RouteKeyVars are the variables holding the [models] keys, by route: the
// egress alone is given them.
func (d *Deployment) RouteKeyVars() map[string]string {
	out := map[string]string{}
	for n, r := range d.Models {
		if r.KeyEnv != "" {
			out[n] = r.KeyEnv
		}
	}
	return out
}

// CheckRouteKeys reports the [models] keys whose variable env does not
// set: the egress refuses to start without them. The vessel, which never
// holds them, does not call it; validate and deploy do.
func CheckRouteKeys(d *Deployment, env Env) error {
	var errs Errors
	c := &collector{file: d.file, pos: d.pos, errs: &errs}
	for _, n := range slices.Sorted(maps.Keys(d.Models)) {
		r := d.Models[n]
		if r.KeyEnv == "" {
			continue
		}
		if v, ok := env(r.KeyEnv); !ok || strings.TrimSpace(v) == "" {
			c.add("models."+n+".key", "%s (the key of route %s, read by the egress)", missing(env, r.KeyEnv), n)
		}
	}
	if a := d.Egress.UpstreamAuth; a == AuthBearer || a == AuthAPIKey {
		// The default route's key is the operator's VESSEL_MODEL_KEY.
		if v, ok := env(ModelKeyVar); !ok || strings.TrimSpace(v) == "" {
			c.add("egress.upstream_auth", "%s (upstream_auth %q sends the model key)", missing(env, ModelKeyVar), a)
		}
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}
