package compose

import (
	"testing"

	"github.com/astraldeep/astralvessel-go/deployer/spec"
)

// TestTelemetryBecomesOTELVariables: [telemetry] gives the vessel, the
// egress and every sandbox the standard OTEL_* variables with their own
// service names (a sandbox's resource names its agent), an env: endpoint
// stays a reference for Compose, and without the table no service gets
// any OTEL_ variable.
func TestTelemetryBecomesOTELVariables(t *testing.T) {
	d := load(t, "custom")
	gen := func(d *spec.Deployment) *composeFile {
		t.Helper()
		g, err := newGen(d, Options{OutDir: t.TempDir(), SourceDir: "testdata"})
		if err != nil {
			t.Fatal(err)
		}
		f, err := g.file()
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	for name, s := range gen(d).Services {
		for k := range s.Environment {
			if len(k) > 5 && k[:5] == "OTEL_" {
				t.Errorf("no [telemetry]: %s has %s", name, k)
			}
		}
	}
	ratio := 0.5
	d.Telemetry = spec.Telemetry{OTLPEndpoint: "http://otel-collector:4318", OTLPProtocol: "grpc", SampleRatio: &ratio}
	f := gen(d)
	want := map[string]string{"vessel": "vessel", "egress": "egress"}
	for _, a := range d.Agents {
		want["sandbox-"+a.ID] = "sandboxd"
	}
	for svc, name := range want {
		env := f.Services[svc].Environment
		if env["OTEL_SERVICE_NAME"] != name || env["OTEL_EXPORTER_OTLP_ENDPOINT"] != "http://otel-collector:4318" ||
			env["OTEL_EXPORTER_OTLP_PROTOCOL"] != "grpc" || env["OTEL_TRACES_EXPORTER"] != "otlp" || env["OTEL_TRACES_SAMPLER_ARG"] != "0.5" {
			t.Errorf("%s: %v", svc, env)
		}
	}
	if got := f.Services["sandbox-"+d.Agents[0].ID].Environment["OTEL_RESOURCE_ATTRIBUTES"]; got != "vessel.agent="+d.Agents[0].ID {
		t.Errorf("sandbox resource attributes %q", got)
	}
	if _, ok := f.Services["search"]; ok {
		if _, has := f.Services["search"].Environment["OTEL_SERVICE_NAME"]; has {
			t.Error("the search container got tracing variables")
		}
	}
	d.EnvRefs["telemetry.otlp_endpoint"] = "COLLECTOR_URL"
	if got := gen(d).Services["vessel"].Environment["OTEL_EXPORTER_OTLP_ENDPOINT"]; got != "${COLLECTOR_URL}" {
		t.Errorf("env: endpoint: %q", got)
	}
}
