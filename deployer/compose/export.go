package compose

import (
	"fmt"
	"strings"

	"github.com/astraldeep/astralvessel-go/deployer/spec"
)

// Service is one service of the Compose file as another target's
// generator (deployer/kube) needs it: the same image, arguments,
// environment and mounts, so both targets start the same processes.
type Service struct {
	Image string
	// Build is the build context of an agent's own sandbox image, relative
	// to the Compose file's folder ("" when the image is prebuilt).
	Build string
	// Command holds the arguments after the image's entrypoint.
	Command []string
	// Environment is as Compose reads it: "${NAME}" is the operator's
	// variable NAME, and "$$" a literal "$" (Literal undoes that).
	Environment map[string]string
	UID         int
	// Volumes are the bind mounts and named volumes, "SOURCE:TARGET[:ro]",
	// SOURCE relative to the Compose file's folder.
	Volumes          []string
	Labels           map[string]string
	StopGraceSeconds int
	// Health holds the health subcommand's argv (binary, "health", args).
	Health    []string
	MemLimit  int64
	PIDsLimit int
}

// Services returns the services Generate writes for d, keyed by their
// Compose names (vessel, egress, search, sandbox-<agent>).
func Services(d *spec.Deployment, opts Options) (map[string]Service, error) {
	g, err := newGen(d, opts)
	if err != nil {
		return nil, err
	}
	f, err := g.file()
	if err != nil {
		return nil, err
	}
	out := make(map[string]Service, len(f.Services))
	for name, s := range f.Services {
		uid := 0
		if u, _, ok := strings.Cut(s.User, ":"); ok {
			if _, err := fmt.Sscanf(u, "%d", &uid); err != nil {
				return nil, fmt.Errorf("compose: %s: user %q: %w", name, s.User, err)
			}
		}
		e := Service{Image: s.Image, Command: s.Command, Environment: s.Environment, UID: uid,
			Volumes: s.Volumes, Labels: s.Labels, MemLimit: s.MemLimit, PIDsLimit: s.PIDsLimit}
		if s.Build != nil {
			e.Build = s.Build.Context
		}
		if s.StopGracePeriod != "" {
			if _, err := fmt.Sscanf(s.StopGracePeriod, "%ds", &e.StopGraceSeconds); err != nil {
				return nil, fmt.Errorf("compose: %s: stop_grace_period %q: %w", name, s.StopGracePeriod, err)
			}
		}
		if s.Healthcheck != nil && len(s.Healthcheck.Test) > 1 {
			e.Health = s.Healthcheck.Test[1:]
		}
		out[name] = e
	}
	return out, nil
}

// Literal undoes Compose's interpolation of an environment value: it
// reports the operator variable a "${NAME}" value names, or the literal
// value with "$$" read as "$".
func Literal(v string) (value, envName string) {
	if strings.HasPrefix(v, "${") && strings.HasSuffix(v, "}") && !strings.ContainsAny(v[2:len(v)-1], "${}") {
		return "", v[2 : len(v)-1]
	}
	return strings.ReplaceAll(v, "$$", "$"), ""
}
