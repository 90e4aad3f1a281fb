package localstack

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/astraldeep/astralvessel-go/deployer/spec"
)

// egressRoutes adds the deployment's model routes to the egress's
// variables: their auth style, the routes, and each route's key read from
// the operator's environment (the egress is the only process given it).
// With the scripted model every route is served by it, keyless, so a
// local try-out never reaches a provider.
func (pl *plan) egressRoutes(vars map[string]string) error {
	if a := pl.d.Egress.UpstreamAuth; a != "" && !pl.cfg.scripted() {
		vars["VESSEL_UPSTREAM_MODEL_AUTH"] = a
	}
	if len(pl.d.Models) == 0 {
		return nil
	}
	if pl.cfg.scripted() {
		routes := map[string]spec.ModelRoute{}
		for n := range pl.d.Models {
			routes[n] = spec.ModelRoute{URL: pl.upstream, AllowHTTP: true}
		}
		b, err := json.Marshal(routes)
		if err != nil {
			return fmt.Errorf("localstack: routes: %w", err)
		}
		vars["VESSEL_EGRESS_ROUTES"] = string(b)
		return nil
	}
	vars["VESSEL_EGRESS_ROUTES"] = pl.d.EncodeRoutes()
	keys := pl.d.RouteKeyVars()
	for _, n := range slices.Sorted(maps.Keys(keys)) {
		v, ok := pl.cfg.Env(keys[n])
		if !ok || v == "" {
			return fmt.Errorf("localstack: model route %s: its key variable %s is not set", n, keys[n])
		}
		vars[keys[n]] = v
	}
	return nil
}
