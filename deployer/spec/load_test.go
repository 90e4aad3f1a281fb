package spec

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// checkFixtureVessel checks the fixture's vessel, gRPC, search and egress
// settings (defaults filled in, references resolved).
func checkFixtureVessel(t *testing.T, d *Deployment) {
	t.Helper()
	if d.Vessel.Project != "test" || d.Vessel.Port != 8700 || d.Vessel.FrontAddress != "172.31.247.10" ||
		d.Vessel.PublicURL != "http://172.31.247.10:8700" || d.Vessel.TaskTTLHours != 24 || d.Search.Provider != "searxng" ||
		d.Vessel.RequestBodyTimeoutSecs != 60 || d.Vessel.ShutdownGraceSecs != 20 || d.Vessel.StopGraceSecs() != 40 {
		t.Errorf("vessel defaults: %+v search %+v", d.Vessel, d.Search)
	}
	if d.Vessel.GRPCPort != 8701 || d.Vessel.GRPCPublicAddress != "172.31.247.10:8701" {
		t.Errorf("gRPC defaults: port %d, public address %q", d.Vessel.GRPCPort, d.Vessel.GRPCPublicAddress)
	}
	if d.Egress.UpstreamURL != "https://models.example.test/v1" {
		t.Errorf("upstream not resolved: %q", d.Egress.UpstreamURL)
	}
	if d.EnvRefs["apps[0].key_sha256"] != "APP_SHA" || d.EnvRefs["agents[0].services.records.headers.X-Token"] != "RECORDS_TOKEN" {
		t.Errorf("env refs: %v", d.EnvRefs)
	}
}

// checkFixtureAgents checks the fixture's agents: alpha's sandbox, service
// headers, model defaults and declared tools, and beta's defaults.
func checkFixtureAgents(t *testing.T, d *Deployment) {
	t.Helper()
	a := d.Agents[0]
	if a.Sandbox.Scratch != 64<<20 || a.Sandbox.TurnDisk != 8<<20 || a.Sandbox.UserDisk != 16<<20 ||
		a.Sandbox.Memory != 512<<20 || a.Sandbox.PIDs != 256 ||
		a.Sandbox.UIDs != (UIDRange{First: ProjectCallUIDBase("test"), Count: CallUIDsPerAgent}) {
		t.Errorf("sandbox defaults: %+v", a.Sandbox)
	}
	if a.Services["records"].Headers["X-Token"] != "secret-token" {
		t.Errorf("header not resolved: %v", a.Services)
	}
	m := a.Manifest
	if m.Model.APIKey != DefaultAPIKey || m.Model.MaxSteps != 8 || m.DeadlineSecs != 300 ||
		m.Model.MaxAnswerBytes != 1<<20 || m.Model.MaxToolArgumentsBytes != 1<<20 ||
		m.Model.FirstByteTimeoutSecs != 60 || m.Model.IdleTimeoutSecs != 60 {
		t.Errorf("model defaults: %+v deadline %d", m.Model, m.DeadlineSecs)
	}
	if len(m.Declared) != 2 || m.Declared[0].Name != "lookup" || m.Declared[1].Name != "species" || m.Declared[1].TimeoutSeconds != 60 {
		t.Errorf("declared tools: %+v", m.Declared)
	}
	b := d.Agents[1].Manifest
	if b.Model.MaxSteps != 12 || b.Version != DefaultVersion || b.Output.Files == nil {
		t.Errorf("beta defaults: %+v", b)
	}
}

func TestLoadFixture(t *testing.T) {
	d, err := loadFixture(t, nil)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	checkFixtureVessel(t, d)
	checkFixtureAgents(t, d)
	if got := PromptFiles(d.Agents[0].Manifest); !slices.Equal(got, []string{"prompt.md", "extra.md"}) {
		t.Errorf("prompt files %q", got)
	}
}

// Each broken input must give an error naming the file, the line and the field.
func TestLoadErrors(t *testing.T) {
	dep := fixture["deploy/deployment.toml"]
	cases := []struct {
		name      string
		overrides map[string]string
		env       map[string]string
		want      string // substring of the error text: file:line: field: ...
	}{
		{"bad allow port", map[string]string{"deploy/deployment.toml": strings.Replace(dep, `upstream_url = "env:UPSTREAM"`, `upstream_url = "env:UPSTREAM"`+"\nallow_hosts = [\"intranet.example.org\"]\nallow_ports = [8443, 70000]", 1)}, nil,
			"deployment.toml:8: egress.allow_ports[1]: invalid port 70000; want 1 to 65535"},
		{"allow port without destination", map[string]string{"deploy/deployment.toml": strings.Replace(dep, `upstream_url = "env:UPSTREAM"`, `upstream_url = "env:UPSTREAM"`+"\nallow_ports = [8443]", 1)}, nil,
			"egress.allow_ports: extra ports apply only to allow_cidrs and allow_hosts destinations"},
		{"unknown key", map[string]string{"deploy/deployment.toml": strings.Replace(dep, `project = "test"`, `project = "test"`+"\nprojekt = 1", 1)}, nil,
			"deployment.toml:4: vessel.projekt: unknown key; allowed here: front_address"},
		{"body timeout out of range", map[string]string{"deploy/deployment.toml": strings.Replace(dep, `project = "test"`, `project = "test"`+"\nrequest_body_timeout_seconds = 3601", 1)}, nil,
			"deployment.toml:4: vessel.request_body_timeout_seconds: 3601 is out of range; allowed 1 to 3600"},
		{"shutdown grace out of range", map[string]string{"deploy/deployment.toml": strings.Replace(dep, `project = "test"`, `project = "test"`+"\nshutdown_grace_seconds = -1", 1)}, nil,
			"deployment.toml:4: vessel.shutdown_grace_seconds: -1 is out of range; allowed 0 to 3600"},
		{"grpc port clash", map[string]string{"deploy/deployment.toml": strings.Replace(dep, `project = "test"`, `project = "test"`+"\ngrpc_port = 8700", 1)}, nil,
			"deployment.toml:4: vessel.grpc_port: 8700 is also vessel.port"},
		{"grpc port out of range", map[string]string{"deploy/deployment.toml": strings.Replace(dep, `project = "test"`, `project = "test"`+"\ngrpc_port = 0", 1)}, nil,
			"deployment.toml:4: vessel.grpc_port: 0 is out of range"},
		{"grpc public address", map[string]string{"deploy/deployment.toml": strings.Replace(dep, `project = "test"`, `project = "test"`+"\ngrpc_public_address = \"http://vessel:8701\"", 1)}, nil,
			"deployment.toml:4: vessel.grpc_public_address: \"http://vessel:8701\": want host:port"},
		{"type mismatch", map[string]string{"deploy/deployment.toml": strings.Replace(dep, `project = "test"`, `port = "x"`, 1)}, nil,
			"deployment.toml:3: vessel.port:"},
		{"bad size", map[string]string{"deploy/deployment.toml": strings.Replace(dep, `scratch = "64MB"`, `scratch = "lots"`, 1)}, nil,
			`deployment.toml:24: agents[alpha].sandbox.scratch: invalid size "lots"`},
		{"missing env", nil, map[string]string{"APP_SHA": fixtureEnv["APP_SHA"], "RECORDS_TOKEN": "x"},
			"deployment.toml:6: egress.upstream_url: environment variable UPSTREAM is not set"},
		{"bad digest", nil, map[string]string{"UPSTREAM": fixtureEnv["UPSTREAM"], "APP_SHA": "abc", "RECORDS_TOKEN": "x"},
			"deployment.toml:10: apps[web].key_sha256: want 64 hex characters"},
		{"unknown agent", map[string]string{"deploy/deployment.toml": strings.Replace(dep, `agents = ["alpha"]`, `agents = ["gamma"]`, 1)}, nil,
			`deployment.toml:18: issuers[idp].agents[0]: no agent with id "gamma"`},
		{"bad id", map[string]string{"deploy/deployment.toml": strings.Replace(dep, `id = "beta"`, `id = "Beta"`, 1)}, nil,
			`deployment.toml:32: agents[1].id: invalid id "Beta"`},
		{"long id", map[string]string{"deploy/deployment.toml": strings.Replace(dep, `id = "beta"`, `id = "`+strings.Repeat("b", 56)+`"`, 1)}, nil,
			`deployment.toml:32: agents[1].id: "bbbb`},
		{"http issuer", map[string]string{"deploy/deployment.toml": strings.Replace(dep, "https://idp", "http://idp", 1)}, nil,
			"deployment.toml:15: issuers[idp].issuer: \"http://idp.example.test/realm\" must use https"},
		{"both jwks", map[string]string{"deploy/deployment.toml": strings.Replace(dep, `jwks_file = "jwks.json"`, `jwks_file = "jwks.json"`+"\njwks_url = \"https://idp.example.test/certs\"", 1)}, nil,
			"issuers[idp].jwks_file: set exactly one of jwks_url and jwks_file"},
		{"mount target", map[string]string{"deploy/deployment.toml": strings.Replace(dep, `/data/guide`, `/etc/guide`, 1)}, nil,
			`deployment.toml:26: agents[alpha].sandbox.mounts[0].target: "/etc/guide" is reserved`},
		{"mount source", map[string]string{"deploy/deployment.toml": strings.Replace(dep, `"../data"`, `"../nodata"`, 1)}, nil,
			`deployment.toml:26: agents[alpha].sandbox.mounts[0].source: folder`},
		{"turn disk", map[string]string{"deploy/deployment.toml": strings.Replace(dep, `scratch = "64MB"`, `scratch = "64MB"`+"\nturn_disk = \"1GiB\"", 1)}, nil,
			"deployment.toml:25: agents[alpha].sandbox.turn_disk: must be more than 0 and at most scratch (64MiB)"},
		{"front address", map[string]string{"deploy/deployment.toml": strings.Replace(dep, `project = "test"`, `front_address = "10.0.0.5"`, 1)}, nil,
			"deployment.toml:3: vessel.front_address: 10.0.0.5 must be inside 172.31.247.0/24"},
		{"ungranted service", map[string]string{"agents/alpha/tools/lookup.toml": strings.Replace(fixture["agents/alpha/tools/lookup.toml"], `"records"`, `"billing"`, 1)}, nil,
			`lookup.toml:3: service: service "billing" is not granted to agent "alpha"`},
		{"command and service", map[string]string{"agents/alpha/tools/lookup.toml": "command = [\"x\"]\n" + fixture["agents/alpha/tools/lookup.toml"]}, nil,
			"lookup.toml:4: service: a tool has either command"},
		{"bad scope", map[string]string{"agents/alpha/tools/species.toml": strings.Replace(fixture["agents/alpha/tools/species.toml"], "tools:read", "tools:root", 1)}, nil,
			`species.toml:4: scope: unknown scope "tools:root"; allowed: tools:read, tools:search`},
		{"builtin clash", map[string]string{"agents/alpha/tools/species.toml": strings.Replace(fixture["agents/alpha/tools/species.toml"], `name = "species"`, `name = "bash"`, 1)}, nil,
			`species.toml:1: name: "bash" is the name of a built-in tool`},
		{"duplicate tool", map[string]string{"agents/alpha/tools/species2.toml": fixture["agents/alpha/tools/species.toml"]}, nil,
			`species2.toml:1: name: tool "species" is also declared in`},
		{"unknown builtin", map[string]string{"agents/beta/vessel.toml": strings.Replace(fixture["agents/beta/vessel.toml"], `"glob"`, `"shell"`, 1)}, nil,
			`beta/vessel.toml:6: tools.enabled[1]: unknown built-in tool "shell"`},
		{"bad output", map[string]string{"agents/alpha/vessel.toml": strings.Replace(alphaManifest, `"csv"`, `"exe"`, 1)}, nil,
			`alpha/vessel.toml:15: output.files[1]: unknown file type "exe"; allowed: png, svg, csv, pdf`},
		{"missing prompt", map[string]string{"agents/beta/prompt.md": "\x00"}, nil,
			"beta/prompt.md: missing"},
		{"manifest unknown key", map[string]string{"agents/beta/vessel.toml": strings.Replace(fixture["agents/beta/vessel.toml"], "[tools]", "temprature = 2\n[tools]", 1)}, nil,
			"beta/vessel.toml:5: model.temprature: unknown key; allowed here: accepts_images, api_key, base_url, extra_body, first_byte_timeout_seconds, idle_timeout_seconds, max_answer_bytes, max_output_tokens, max_steps, max_tool_arguments_bytes, name, reasoning_effort, response_format, seed, stop, temperature, top_p"},
		{"idle timeout out of range", map[string]string{"agents/alpha/vessel.toml": strings.Replace(alphaManifest, "max_steps = 8", "max_steps = 8\nidle_timeout_seconds = 0", 1)}, nil,
			"alpha/vessel.toml:10: model.idle_timeout_seconds: 0 is out of range; allowed 1 to 3600"},
		{"answer limit too small", map[string]string{"agents/alpha/vessel.toml": strings.Replace(alphaManifest, "max_steps = 8", "max_steps = 8\nmax_answer_bytes = 100", 1)}, nil,
			"alpha/vessel.toml:10: model.max_answer_bytes: 100 bytes is out of range; allowed 1KiB to 4MiB"},
		{"arguments limit too large", map[string]string{"agents/alpha/vessel.toml": strings.Replace(alphaManifest, "max_steps = 8", "max_steps = 8\nmax_tool_arguments_bytes = \"5MiB\"", 1)}, nil,
			"alpha/vessel.toml:10: model.max_tool_arguments_bytes: 5242880 bytes is out of range; allowed 1KiB to 4MiB"},
		{"syntax", map[string]string{"agents/beta/vessel.toml": "name = \n"}, nil,
			"beta/vessel.toml:1:8: "},
		{"approval unknown tool", map[string]string{"deploy/deployment.toml": strings.Replace(dep, `headers = { "X-Token" = "env:RECORDS_TOKEN" }`, `headers = { "X-Token" = "env:RECORDS_TOKEN" }`+"\n[agents.approval]\ntools = [\"species\", \"bsh\"]", 1)}, nil,
			`deployment.toml:31: agents[alpha].approval.tools[1]: agent "alpha" has no tool "bsh"; its tools: `},
		{"approval unknown scope", map[string]string{"deploy/deployment.toml": strings.Replace(dep, `headers = { "X-Token" = "env:RECORDS_TOKEN" }`, `headers = { "X-Token" = "env:RECORDS_TOKEN" }`+"\n[agents.approval]\nscopes = [\"tools:root\"]", 1)}, nil,
			`agents[alpha].approval.scopes[0]: unknown scope "tools:root"`},
		{"approval ungranted service", map[string]string{"deploy/deployment.toml": strings.Replace(dep, `headers = { "X-Token" = "env:RECORDS_TOKEN" }`, `headers = { "X-Token" = "env:RECORDS_TOKEN" }`+"\n[agents.approval]\nservices = [\"billing\"]", 1)}, nil,
			`agents[alpha].approval.services[0]: service "billing" is not granted to agent "alpha"`},
		{"approval timeout", map[string]string{"deploy/deployment.toml": strings.Replace(dep, `headers = { "X-Token" = "env:RECORDS_TOKEN" }`, `headers = { "X-Token" = "env:RECORDS_TOKEN" }`+"\n[agents.approval]\ntimeout_seconds = 1201", 1)}, nil,
			`agents[alpha].approval.timeout_seconds: 1201 is out of range; allowed 1 to 1200`},
		{"approval on_timeout", map[string]string{"deploy/deployment.toml": strings.Replace(dep, `headers = { "X-Token" = "env:RECORDS_TOKEN" }`, `headers = { "X-Token" = "env:RECORDS_TOKEN" }`+"\n[agents.approval]\non_timeout = \"approve\"", 1)}, nil,
			`agents[alpha].approval.on_timeout: unknown value "approve"; allowed: deny`},
		{"sandbox runtime", map[string]string{"deploy/deployment.toml": strings.Replace(dep, `scratch = "64MB"`, `scratch = "64MB"`+"\nruntime = \"kata\"", 1)}, nil,
			`deployment.toml:25: agents[alpha].sandbox.runtime: unknown value "kata"; allowed: confined`},
		{"no agents", map[string]string{"deploy/deployment.toml": "[egress]\nupstream_url = \"https://m.example.test\"\n"}, nil,
			"deployment.toml: agents: at least one"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := fixtureEnv
			if tc.env != nil {
				env = tc.env
			}
			dir := t.TempDir()
			writeTree(t, dir, fixture, tc.overrides)
			d, err := LoadDeployment(dir+"/deploy/deployment.toml", envOf(env))
			if err == nil {
				err = CheckHostPaths(d)
			}
			if err == nil {
				t.Fatalf("no error, want %q", tc.want)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T is not an *Error: %v", err, err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error:\n%v\nwant it to contain:\n%s", err, tc.want)
			}
		})
	}
}

func TestLoadApproval(t *testing.T) {
	dir := t.TempDir()
	dep := strings.Replace(fixture["deploy/deployment.toml"], `headers = { "X-Token" = "env:RECORDS_TOKEN" }`,
		`headers = { "X-Token" = "env:RECORDS_TOKEN" }`+"\n[agents.approval]\ntools = [\"species\"]\nscopes = [\"tools:write\", \"tools:execute\"]\nservices = [\"records\"]\non_timeout = \"fail\"\nallow_edit = true", 1)
	writeTree(t, dir, fixture, map[string]string{"deploy/deployment.toml": dep})
	d, err := LoadDeployment(dir+"/deploy/deployment.toml", envOf(fixtureEnv))
	if err != nil {
		t.Fatal(err)
	}
	ap := d.Agents[0].Approval
	if ap == nil || len(ap.Tools) != 1 || len(ap.Scopes) != 2 || ap.Services[0] != "records" || !ap.AllowEdit {
		t.Fatalf("approval = %+v", ap)
	}
	if ap.Timeout() != DefaultApprovalTimeout || ap.TimeoutAction() != OnTimeoutFail {
		t.Fatalf("timeout %d %s", ap.Timeout(), ap.TimeoutAction())
	}
	if d.Agents[1].Approval != nil || d.Agents[1].Approval.TimeoutAction() != OnTimeoutDeny {
		t.Fatal("beta has no approval table; its defaults are deny")
	}
}

func TestParseByteSize(t *testing.T) {
	for in, want := range map[string]ByteSize{"512MB": 512 << 20, "1GiB": 1 << 30, "64k": 64 << 10, "100": 100, "1.5g": 3 << 29, " 2 MiB ": 2 << 20, "7b": 7} {
		got, err := ParseByteSize(in)
		if err != nil || got != want {
			t.Errorf("ParseByteSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "MB", "1XB", "-1", "1..2MB", "99999999999999TB"} {
		if _, err := ParseByteSize(in); err == nil {
			t.Errorf("ParseByteSize(%q): no error", in)
		}
	}
}

func TestModelOutputLimits(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, fixture, map[string]string{"agents/alpha/vessel.toml": strings.Replace(alphaManifest, "max_steps = 8",
		"max_steps = 8\nmax_answer_bytes = \"64KiB\"\nmax_tool_arguments_bytes = 2048", 1)})
	d, err := LoadDeployment(dir+"/deploy/deployment.toml", envOf(fixtureEnv))
	if err != nil {
		t.Fatal(err)
	}
	if m := d.Agents[0].Manifest.Model; m.MaxAnswerBytes != 64<<10 || m.MaxToolArgumentsBytes != 2048 {
		t.Fatalf("limits %d %d", m.MaxAnswerBytes, m.MaxToolArgumentsBytes)
	}
	if m := d.Agents[1].Manifest.Model; m.MaxAnswerBytes != DefaultMaxAnswerBytes || m.MaxToolArgumentsBytes != DefaultMaxToolArgumentsBytes {
		t.Fatalf("defaults %d %d", m.MaxAnswerBytes, m.MaxToolArgumentsBytes)
	}
}

// One load reports every problem, type errors and unknown keys included, in
// line order, each with file:line:field, and names agents, apps and issuers
// by id.
func TestLoadReportsEverything(t *testing.T) {
	dep := fixture["deploy/deployment.toml"]
	dep = strings.Replace(dep, `project = "test"`, `project = "test"`+"\nport = \"x\"\nprojekt = 1", 1)
	dep = strings.Replace(dep, `scratch = "64MB"`, `scratch = "lots"`+"\nturn_disk = \"1GiB\"", 1)
	dep = strings.Replace(dep, `package = "../agents/beta"`, `package = "../agents/gone"`, 1)
	dir := t.TempDir()
	writeTree(t, dir, fixture, map[string]string{"deploy/deployment.toml": dep})
	_, err := LoadDeployment(dir+"/deploy/deployment.toml", envOf(map[string]string{"UPSTREAM": fixtureEnv["UPSTREAM"], "APP_SHA": "abc", "RECORDS_TOKEN": "x"}))
	var es Errors
	if !errors.As(err, &es) {
		t.Fatalf("error %T: %v", err, err)
	}
	want := []string{
		"deployment.toml:4: vessel.port: got a TOML string",
		"deployment.toml:5: vessel.projekt: unknown key",
		"deployment.toml:12: apps[web].key_sha256: want 64 hex characters",
		`deployment.toml:26: agents[alpha].sandbox.scratch: invalid size "lots"`,
		"deployment.toml:36: agents[beta].package: agent folder",
	}
	if len(es) != len(want) {
		t.Fatalf("got %d errors, want %d:\n%v", len(es), len(want), err)
	}
	for i, w := range want {
		if !strings.Contains(es[i].Error(), w) {
			t.Errorf("error %d: %s\nwant it to contain %s", i, es[i], w)
		}
	}
	// The fields stay indexed for programs (deploy maps env references by them).
	if es[3].Field != "agents[0].sandbox.scratch" {
		t.Errorf("field %q", es[3].Field)
	}
	// A value over several lines that has the wrong type: reported, and the
	// load stops there without a made-up syntax error.
	dep = strings.Replace(fixture["deploy/deployment.toml"], `project = "test"`, "project = [\n  \"a\",\n]", 1)
	writeTree(t, dir, fixture, map[string]string{"deploy/deployment.toml": dep})
	_, err = LoadDeployment(dir+"/deploy/deployment.toml", envOf(fixtureEnv))
	if !errors.As(err, &es) || len(es) != 1 || !strings.Contains(es[0].Error(), "deployment.toml:3: vessel.project: got a TOML array") {
		t.Errorf("multi-line value: %v", err)
	}
}
