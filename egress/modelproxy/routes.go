package modelproxy

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/astraldeep/astralvessel-go/runtime/redact"
	"github.com/astraldeep/astralvessel-go/runtime/routes"
)

// Route is one named upstream besides the default one ([models.<name>]):
// the route as the deployment wrote it (URL resolved) and its key.
type Route struct {
	Name  string
	Route routes.ModelRoute
	// Key is the route's key as read from Route.KeyEnv; empty for auth
	// none.
	Key redact.Secret
}

// route is a checked route with its key.
type route struct {
	*routes.ResolvedRoute
	key string
}

// newRoute checks r with the check validate uses (routes.ResolveRoute), so
// the egress starts with exactly what validate accepted.
func newRoute(name string, r routes.ModelRoute, key string) (*route, error) {
	rr, ps := routes.ResolveRoute(name, r, key != "")
	if len(ps) > 0 {
		msgs := make([]string, len(ps))
		for i, p := range ps {
			msgs[i] = p.Key + ": " + p.Msg
		}
		return nil, fmt.Errorf("modelproxy: route %s: %s", name, strings.Join(msgs, "; "))
	}
	if rr.Auth != routes.AuthNone && key == "" {
		src := "its key variable"
		if r.KeyEnv != "" {
			src = r.KeyEnv
		}
		return nil, fmt.Errorf("modelproxy: route %s: auth %s needs a key, and %s is empty", name, rr.Auth, src)
	}
	return &route{ResolvedRoute: rr, key: key}, nil
}

// authorize sets the route's credentials on an outgoing request.
func (rt *route) authorize(h http.Header) {
	switch rt.Auth {
	case routes.AuthBearer:
		h.Set("Authorization", "Bearer "+rt.key)
	case routes.AuthAPIKey:
		h.Set("Api-Key", rt.key)
	}
	for k, vs := range rt.Headers {
		h[k] = slices.Clone(vs)
	}
}

// port is the route's upstream port, for audit events.
func (rt *route) port() int {
	if p := rt.Base.Port(); p != "" {
		var n int
		_, _ = fmt.Sscanf(p, "%d", &n)
		return n
	}
	if rt.Base.Scheme == "http" {
		return 80
	}
	return 443
}

type routeKey struct{}

func withRoute(ctx context.Context, rt *route) context.Context {
	return context.WithValue(ctx, routeKey{}, rt)
}

func routeFrom(ctx context.Context) *route {
	rt, _ := ctx.Value(routeKey{}).(*route)
	return rt
}

// Routes are the route names the handler serves, sorted, for start-up logs.
func (h *Handler) Routes() []string { return slices.Sorted(maps.Keys(h.routes)) }

// routeLabel is the metrics label of a request's route: a configured
// name, or "unknown" (bounded by the configured routes).
func routeLabel(rt *route) string {
	if rt == nil {
		return "unknown"
	}
	return rt.Name
}

// redact removes every route's key from s.
func (h *Handler) redact(s string) string {
	for _, rt := range h.routes {
		if rt.key != "" {
			s = strings.ReplaceAll(s, rt.key, "[redacted]")
		}
	}
	return s
}

func (h *Handler) redactBytes(b []byte) []byte {
	for _, rt := range h.routes {
		if rt.key != "" && strings.Contains(string(b), rt.key) {
			b = []byte(strings.ReplaceAll(string(b), rt.key, "[redacted]"))
		}
	}
	return b
}

func (h *Handler) anyKey() bool {
	for _, rt := range h.routes {
		if rt.key != "" {
			return true
		}
	}
	return false
}
