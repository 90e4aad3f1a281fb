package spec

import (
	"strings"
	"testing"
)

func withTelemetry(table string) map[string]string {
	return map[string]string{"deploy/deployment.toml": fixture["deploy/deployment.toml"] + "\n[telemetry]\n" + table + "\n"}
}

func TestTelemetryTable(t *testing.T) {
	d, err := loadFixture(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	if env := d.Telemetry.TracingEnv("vessel"); env != nil {
		t.Errorf("no [telemetry]: %v, want no variables", env)
	}
	d, err = loadFixture(t, withTelemetry(`otlp_endpoint = "http://otel-collector:4318"
otlp_protocol = "grpc"
sample_ratio = 0.25`))
	if err != nil {
		t.Fatal(err)
	}
	env := d.Telemetry.TracingEnv("egress")
	want := map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://otel-collector:4318",
		"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_SERVICE_NAME": "egress",
		"OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.25"}
	if len(env) != len(want) {
		t.Errorf("env %v, want %v", env, want)
	}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("%s = %q, want %q", k, env[k], v)
		}
	}
	d, err = loadFixture(t, withTelemetry(`otlp_endpoint = "https://collector.internal/otlp"`))
	if err != nil {
		t.Fatal(err)
	}
	if env := d.Telemetry.TracingEnv("vessel"); env["OTEL_EXPORTER_OTLP_PROTOCOL"] != "http/protobuf" || env["OTEL_TRACES_SAMPLER_ARG"] != "1" {
		t.Errorf("defaults: %v", env)
	}
}

func TestTelemetryTableErrors(t *testing.T) {
	for _, tc := range []struct{ table, want string }{
		{`otlp_endpoint = "collector:4318"`, `telemetry.otlp_endpoint: "collector:4318": want http(s)://host[:port][/path]`},
		{`otlp_endpoint = "ftp://collector"`, `want http(s)://host[:port][/path]`},
		{`otlp_endpoint = "http://"`, `want http(s)://host[:port][/path]`},
		{`otlp_endpoint = "http://u:p@collector:4318"`, `telemetry.otlp_endpoint: must not carry credentials`},
		{`otlp_endpoint = "http://collector:4318/?x=1"`, `telemetry.otlp_endpoint: must not have a query or fragment`},
		{`otlp_endpoint = "http://collector:4318"` + "\n" + `otlp_protocol = "http/json"`, `telemetry.otlp_protocol: unknown protocol "http/json"`},
		{`otlp_endpoint = "http://collector:4318"` + "\n" + `sample_ratio = 1.5`, `telemetry.sample_ratio: 1.5: want a number from 0 to 1`},
		{`otlp_endpoint = "http://collector:4318"` + "\n" + `sample_ratio = -0.1`, `telemetry.sample_ratio: -0.1: want a number from 0 to 1`},
		{`otlp_endpoint = "http://collector:4318"` + "\n" + `sample_ratio = nan`, `telemetry.sample_ratio: NaN: want a number from 0 to 1`},
		{`sample_ratio = 0.5`, `telemetry.otlp_endpoint: required when otlp_protocol or sample_ratio is set`},
		{`otlp_endpoint = "env:NO_SUCH_COLLECTOR"`, `telemetry.otlp_endpoint: environment variable NO_SUCH_COLLECTOR is not set`},
		{`endpoint = "http://collector:4318"`, `telemetry.endpoint: unknown key`},
	} {
		_, err := loadFixture(t, withTelemetry(tc.table))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.table, err, tc.want)
		}
	}
}
