package spec

import (
	"net/url"
	"strconv"
)

// Telemetry is the [telemetry] table: where the services send their
// traces. Without otlp_endpoint tracing stays off (unless the operator sets
// the standard OTEL_* variables on the services).
type Telemetry struct {
	// OTLPEndpoint is the base URL of an OTLP receiver (a collector), such
	// as http://otel-collector:4318; the services append /v1/traces
	// (OTLP/HTTP) or dial it (OTLP/gRPC).
	OTLPEndpoint string `toml:"otlp_endpoint"`
	// OTLPProtocol is "http/protobuf" (default) or "grpc".
	OTLPProtocol string `toml:"otlp_protocol"`
	// SampleRatio is the share of traces started by the vessel that are
	// kept, 0 to 1 (default 1); a caller's sampled flag (traceparent) wins.
	SampleRatio *float64 `toml:"sample_ratio"`
}

// OTLPProtocols are the allowed [telemetry] otlp_protocol values.
var OTLPProtocols = []string{"http/protobuf", "grpc"}

// TracingEnv is the standard OTEL_* variables that turn each service's
// tracing on as the table says, for a service named service (vessel,
// egress, sandboxd); nil when the table sets no endpoint.
func (t Telemetry) TracingEnv(service string) map[string]string {
	if t.OTLPEndpoint == "" {
		return nil
	}
	proto := t.OTLPProtocol
	if proto == "" {
		proto = OTLPProtocols[0]
	}
	ratio := 1.0
	if t.SampleRatio != nil {
		ratio = *t.SampleRatio
	}
	return map[string]string{
		"OTEL_TRACES_EXPORTER":        "otlp",
		"OTEL_EXPORTER_OTLP_ENDPOINT": t.OTLPEndpoint,
		"OTEL_EXPORTER_OTLP_PROTOCOL": proto,
		"OTEL_SERVICE_NAME":           service,
		"OTEL_TRACES_SAMPLER":         "parentbased_traceidratio",
		"OTEL_TRACES_SAMPLER_ARG":     strconv.FormatFloat(ratio, 'g', -1, 64),
	}
}

func (v *validator) telemetry() {
	c, t := v.c, &v.d.Telemetry
	if t.OTLPEndpoint == "" {
		if t.OTLPProtocol != "" || t.SampleRatio != nil {
			c.add("telemetry.otlp_endpoint", "required when otlp_protocol or sample_ratio is set")
		}
		return
	}
	if !v.resolve("telemetry.otlp_endpoint", &t.OTLPEndpoint) {
		return
	}
	u, err := url.Parse(t.OTLPEndpoint)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "":
		c.add("telemetry.otlp_endpoint", "%q: want http(s)://host[:port][/path]", t.OTLPEndpoint)
	case u.User != nil:
		c.add("telemetry.otlp_endpoint", "must not carry credentials (user:password@)")
	case u.RawQuery != "" || u.Fragment != "":
		c.add("telemetry.otlp_endpoint", "must not have a query or fragment")
	}
	if t.OTLPProtocol != "" && !contains(OTLPProtocols, t.OTLPProtocol) {
		c.add("telemetry.otlp_protocol", "unknown protocol %q; allowed: http/protobuf, grpc", t.OTLPProtocol)
	}
	if r := t.SampleRatio; r != nil && !(*r >= 0 && *r <= 1) {
		c.add("telemetry.sample_ratio", "%v: want a number from 0 to 1", *r)
	}
}
