// Package routes holds the model routes the egress forwards to and the one
// check of a route that deployer validate and the egress share, so both
// refuse exactly the same things. deployer/spec reads [models] from
// deployment.toml into these types; the egress reads them from
// VESSEL_EGRESS_ROUTES (JSON) and links no TOML parser.
package routes

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// envNamePattern is a variable name a key may be read from.
var envNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// ModelRoute is one [models.<name>] table: an OpenAI-compatible upstream
// the egress forwards to when a model request names the route. Only the
// egress reads the key; the vessel knows the route's name and token
// parameter, nothing else.
type ModelRoute struct {
	// URL is the upstream's base URL (what an OpenAI SDK takes as
	// base_url); it may carry a query (Azure's ?api-version=), which is
	// merged into Query. env: allowed.
	URL string `toml:"url" json:"url"`
	// Key is "env:NAME": the variable the egress reads the key from. A
	// literal key is refused (deployment.toml is not a secret store).
	Key string `toml:"key" json:"-"`
	// KeyEnv is Key's variable name (set by validation); the egress's
	// VESSEL_EGRESS_ROUTES carries it, never the key.
	KeyEnv string `toml:"-" json:"key_env,omitempty"`
	// Auth is how the key is sent: bearer (Authorization: Bearer, the
	// default with a key), api-key (Azure's api-key header) or none (the
	// default without a key).
	Auth string `toml:"auth" json:"auth,omitempty"`
	// Query parameters are added to every forwarded request (api-version).
	Query map[string]string `toml:"query" json:"query,omitempty"`
	// Headers are added to every forwarded request (OpenRouter's
	// HTTP-Referer, a gateway's tenant header); see RouteHeaderProblem.
	Headers map[string]string `toml:"headers" json:"headers,omitempty"`
	// AllowHTTP permits a plain-HTTP URL (a local model server).
	AllowHTTP bool `toml:"allow_http" json:"allow_http,omitempty"`
	// TokenParam is the name the vessel writes the agent's token limit
	// under: max_tokens (default) or max_completion_tokens.
	TokenParam string `toml:"token_param" json:"-"`
	// Provider names the route's provider profile (the vessel's reader
	// and writer; Providers); "" is "auto". Not the egress's.
	Provider string `toml:"provider" json:"-"`
	// SendBack, when set, overrides the profile: the provider fields sent
	// back on the assistant message and on each tool call ([]: none).
	SendBack *[]string `toml:"send_back" json:"-"`
}

// Route auth styles.
const (
	AuthBearer = "bearer"
	AuthAPIKey = "api-key"
	AuthNone   = "none"
)

// DefaultRoute is the route of [egress] upstream_url: the one an agent
// without model_route uses.
const DefaultRoute = "default"

// Name is the route a model request carries for an agent's route setting:
// route, or DefaultRoute when unset.
func Name(route string) string {
	if route == "" {
		return DefaultRoute
	}
	return route
}

// RouteHeader is the request header naming the route of a model request;
// the egress reads it and never forwards it.
const RouteHeader = "X-Vessel-Route"

// Token limit parameter names.
const (
	TokenParamMaxTokens           = "max_tokens"
	TokenParamMaxCompletionTokens = "max_completion_tokens"
)

// Bounds of a route's extras.
const (
	MaxRoutes          = 32
	MaxRouteQuery      = 16
	MaxRouteHeaders    = 16
	MaxRouteValueBytes = 1024
	routeNameMaxLen    = 32
)

var routeNamePattern = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)

// RouteProblem is one reason a route is refused; Key is relative to the
// route's table ("url", "headers.Authorization").
type RouteProblem struct {
	Key, Msg string
}

// ResolvedRoute is a checked route as the egress uses it.
type ResolvedRoute struct {
	Name    string
	Base    *url.URL // no query, no trailing slash
	Query   url.Values
	Auth    string // never empty
	Headers http.Header
}

// CheckRouteName says why name cannot name a [models] route, or "".
func CheckRouteName(name string) string {
	switch {
	case !routeNamePattern.MatchString(name) || len(name) > routeNameMaxLen:
		return fmt.Sprintf("invalid route name %q; allowed: lowercase letters, digits, - and _, starting with a letter, at most %d", name, routeNameMaxLen)
	case name == DefaultRoute:
		return fmt.Sprintf("%q is the route of [egress] upstream_url; choose another name", name)
	}
	return ""
}

// ResolveRoute checks a route whose URL is resolved (no env: left) and
// whose key, when hasKey, is present. It is the one check of both
// `validate` and the egress, so validate refuses exactly what the egress
// would refuse at start.
func ResolveRoute(name string, r ModelRoute, hasKey bool) (*ResolvedRoute, []RouteProblem) {
	var ps []RouteProblem
	add := func(key, format string, args ...any) {
		ps = append(ps, RouteProblem{Key: key, Msg: fmt.Sprintf(format, args...)})
	}
	out := &ResolvedRoute{Name: name, Query: url.Values{}, Headers: http.Header{}}
	out.Base = resolveURL(r, out.Query, add)
	for _, k := range slices.Sorted(maps.Keys(r.Query)) {
		switch {
		case k == "":
			add("query", "a query parameter needs a name")
		case out.Query.Has(k):
			add("query."+k, "%q is also in the URL's query; set it in one place", k)
		case len(r.Query[k]) > MaxRouteValueBytes:
			add("query."+k, "the value is over %d bytes", MaxRouteValueBytes)
		default:
			out.Query.Set(k, r.Query[k])
		}
	}
	if len(out.Query) > MaxRouteQuery {
		add("query", "%d query parameters; at most %d", len(out.Query), MaxRouteQuery)
	}
	if len(r.Headers) > MaxRouteHeaders {
		add("headers", "%d headers; at most %d", len(r.Headers), MaxRouteHeaders)
	}
	for _, h := range slices.Sorted(maps.Keys(r.Headers)) {
		if msg := RouteHeaderProblem(h, r.Headers[h]); msg != "" {
			add("headers."+h, "%s", msg)
			continue
		}
		out.Headers.Set(h, r.Headers[h])
	}
	out.Auth = resolveAuth(r, hasKey, add)
	return out, ps
}

// resolveURL checks r's URL and moves its query into q; nil when refused.
func resolveURL(r ModelRoute, q url.Values, add func(key, format string, args ...any)) *url.URL {
	u, err := url.Parse(strings.TrimSpace(r.URL))
	switch {
	case r.URL == "":
		add("url", "required: the OpenAI-compatible base URL, e.g. https://api.example.com/v1")
	case err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https"):
		add("url", "invalid URL %q; want https://host/path", r.URL)
	case u.Scheme == "http" && !r.AllowHTTP:
		add("url", "%s is plain HTTP; allow it with allow_http = true (allow_http_upstream for [egress])", u.Redacted())
	case u.User != nil:
		add("url", "the URL must not carry credentials; name the key with key = \"env:NAME\"")
	case u.Fragment != "":
		add("url", "the URL must not carry a fragment")
	default:
		uq, err := url.ParseQuery(u.RawQuery)
		if err != nil {
			add("url", "the URL's query does not parse: %v", err)
		}
		for k, vs := range uq {
			q[k] = append(q[k], vs...)
		}
		b := *u
		b.RawQuery, b.ForceQuery = "", false
		b.Path = strings.TrimSuffix(b.Path, "/")
		b.RawPath = ""
		return &b
	}
	return nil
}

// resolveAuth checks r's auth style against its key; the style in use.
func resolveAuth(r ModelRoute, hasKey bool, add func(key, format string, args ...any)) string {
	named := r.Key != "" || r.KeyEnv != ""
	auth := r.Auth
	switch r.Auth {
	case "":
		auth = AuthNone
		if hasKey || named {
			auth = AuthBearer
		}
	case AuthBearer, AuthAPIKey:
		if !hasKey && !named {
			add("auth", "auth %q sends a key; name it with key = \"env:NAME\"", r.Auth)
		}
	case AuthNone:
		if named {
			add("key", "auth = \"none\" sends no key; remove key or choose auth bearer or api-key")
		}
	default:
		add("auth", "unknown auth %q; allowed: %s, %s, %s", r.Auth, AuthBearer, AuthAPIKey, AuthNone)
	}
	if r.Key != "" {
		if name, ok := strings.CutPrefix(r.Key, "env:"); !ok || !envNamePattern.MatchString(name) {
			add("key", "want key = \"env:NAME\": the egress reads the key from variable NAME; a key is never written in this file")
		} else if reservedKeyVar(name) {
			add("key", "%s is one of the egress's own settings; name another variable", name)
		}
	}
	return auth
}

// reservedKeyVar reports whether a route's key may not come from the
// variable name: the egress's own settings, which the key would replace in
// its environment.
func reservedKeyVar(name string) bool {
	return strings.HasPrefix(name, "VESSEL_EGRESS_") || strings.HasPrefix(name, "VESSEL_UPSTREAM_") ||
		strings.HasPrefix(name, "OTEL_") || name == "GOMEMLIMIT"
}

// hopHeaders are the headers a route may not set: hop-by-hop ones, the
// ones carrying credentials (the key travels only as auth says), and the
// ones the egress and the transport set themselves.
var hopHeaders = []string{
	"Authorization", "Api-Key", "X-Api-Key", "Proxy-Authorization", "Cookie", "Set-Cookie",
	"Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Connection", "Te", "Trailer", "Transfer-Encoding", "Upgrade",
	"Host", "Content-Length", "Content-Type", "Content-Encoding", "Accept-Encoding", "Expect",
	"Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto", "X-Real-Ip",
	"Traceparent", "Tracestate", "Baggage",
}

// RouteHeaderProblem says why a route may not add header h with value v,
// or "".
func RouteHeaderProblem(h, v string) string {
	ck := http.CanonicalHeaderKey(h)
	switch {
	case !ValidHeaderName(h):
		return fmt.Sprintf("invalid header name %q", h)
	case slices.Contains(hopHeaders, ck):
		return fmt.Sprintf("%s is set by the egress or the transport (hop-by-hop, credentials or framing); a route may not set it", ck)
	case strings.HasPrefix(ck, "X-Vessel-") || strings.HasPrefix(ck, "X-Egress-"):
		return "headers starting X-Vessel- or X-Egress- are the deployment's own"
	case len(v) > MaxRouteValueBytes:
		return fmt.Sprintf("the value is over %d bytes", MaxRouteValueBytes)
	case strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f }):
		return "header values must not contain control characters or line breaks"
	}
	return ""
}

// ParseRoutes reads VESSEL_EGRESS_ROUTES.
func ParseRoutes(s string) (map[string]ModelRoute, error) {
	var m map[string]ModelRoute
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("routes: %w", err)
	}
	return m, nil
}

// ModelKeyVar is the operator's variable holding the default route's key.
const ModelKeyVar = "VESSEL_MODEL_KEY"

// ValidHeaderName reports whether h is an HTTP header name (an RFC 9110 token).
func ValidHeaderName(h string) bool {
	if h == "" {
		return false
	}
	for _, r := range h {
		if r > 127 || !(r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || strings.ContainsRune("!#$%&'*+.^`|~", r)) {
			return false
		}
	}
	return true
}
