package localstack

import (
	"testing"

	"github.com/astraldeep/astralvessel-go/deployer/spec"
)

// TestTracingVars: each process of the local stack gets the [telemetry]
// table's variables, the operator's own OTEL_* variables over them, and
// its own service name; none when neither asks for tracing.
func TestTracingVars(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	d := &spec.Deployment{}
	if v := tracingVars(d, "vessel", ""); len(v) != 0 {
		t.Errorf("no tracing asked for: %v", v)
	}
	d.Telemetry = spec.Telemetry{OTLPEndpoint: "http://127.0.0.1:4318"}
	v := tracingVars(d, "sandboxd", "alpha")
	if v["OTEL_EXPORTER_OTLP_ENDPOINT"] != "http://127.0.0.1:4318" || v["OTEL_SERVICE_NAME"] != "sandboxd" ||
		v["OTEL_RESOURCE_ATTRIBUTES"] != "vessel.agent=alpha" || v["OTEL_TRACES_EXPORTER"] != "otlp" {
		t.Errorf("from [telemetry]: %v", v)
	}
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9999")
	t.Setenv("OTEL_SERVICE_NAME", "everyone")
	v = tracingVars(d, "egress", "")
	if v["OTEL_EXPORTER_OTLP_ENDPOINT"] != "http://127.0.0.1:9999" || v["OTEL_SERVICE_NAME"] != "egress" {
		t.Errorf("the operator's variables: %v", v)
	}
	if _, ok := v["OTEL_RESOURCE_ATTRIBUTES"]; ok {
		t.Errorf("the egress got an agent: %v", v)
	}
}
