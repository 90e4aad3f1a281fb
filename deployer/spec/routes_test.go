package spec

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// withRoutes appends tables to the fixture's deployment file and gives
// agent alpha a route (empty: none).
func withRoutes(route, tables string) map[string]string {
	dep := fixture["deploy/deployment.toml"]
	if route != "" {
		dep = strings.Replace(dep, "id = \"alpha\"\n", "id = \"alpha\"\nmodel_route = \""+route+"\"\n", 1)
	}
	return map[string]string{"deploy/deployment.toml": dep + "\n" + tables + "\n"}
}

// lineOf is the 1-based line of the first line of text holding s.
func lineOf(text, s string) int {
	for i, l := range strings.Split(text, "\n") {
		if strings.Contains(l, s) {
			return i + 1
		}
	}
	return 0
}

const azureRoutes = `[models.azure]
url = "https://res.openai.azure.com/openai/deployments/gpt?api-version=2024-10-21"
key = "env:AZURE_KEY"
auth = "api-key"
token_param = "max_completion_tokens"
headers = { "X-Team" = "birds" }

[models.v1]
url = "https://res.openai.azure.com/openai/v1/"
key = "env:AZURE_V1_KEY"

[models.local]
url = "http://127.0.0.1:11434/v1"
allow_http = true
query = { mode = "fast" }
`

func TestRoutesLoaded(t *testing.T) {
	d, err := loadFixture(t, withRoutes("azure", azureRoutes))
	if err != nil {
		t.Fatal(err)
	}
	az := d.Models["azure"]
	if az.KeyEnv != "AZURE_KEY" || az.TokenParam != TokenParamMaxCompletionTokens || az.Auth != AuthAPIKey {
		t.Errorf("azure = %+v", az)
	}
	if d.TokenParam(&d.Agents[0]) != TokenParamMaxCompletionTokens || d.TokenParam(&d.Agents[1]) != TokenParamMaxTokens {
		t.Errorf("token params %q %q", d.TokenParam(&d.Agents[0]), d.TokenParam(&d.Agents[1]))
	}
	if d.Agents[0].Route() != "azure" || d.Agents[1].Route() != DefaultRoute {
		t.Errorf("routes %q %q", d.Agents[0].Route(), d.Agents[1].Route())
	}
	enc := d.EncodeRoutes()
	if strings.Contains(enc, "env:") || !strings.Contains(enc, `"key_env":"AZURE_KEY"`) {
		t.Errorf("encoded routes: %s", enc)
	}
	back, err := ParseRoutes(enc)
	if err != nil {
		t.Fatal(err)
	}
	rr, ps := ResolveRoute("azure", back["azure"], true)
	if len(ps) != 0 || rr.Auth != AuthAPIKey || rr.Query.Get("api-version") != "2024-10-21" ||
		rr.Base.String() != "https://res.openai.azure.com/openai/deployments/gpt" || rr.Headers.Get("X-Team") != "birds" {
		t.Errorf("resolved %+v %v", rr, ps)
	}
	if rr, _ := ResolveRoute("v1", back["v1"], true); rr.Auth != AuthBearer || rr.Base.Path != "/openai/v1" {
		t.Errorf("v1 resolved %+v", rr)
	}
	if rr, _ := ResolveRoute("local", back["local"], false); rr.Auth != AuthNone || rr.Query.Get("mode") != "fast" {
		t.Errorf("local resolved %+v", rr)
	}
	if err := CheckRouteKeys(d, envOf(map[string]string{"AZURE_KEY": "k"})); err == nil ||
		!strings.Contains(err.Error(), "models.v1.key: environment variable AZURE_V1_KEY is not set") {
		t.Errorf("missing key: %v", err)
	}
	if err := CheckRouteKeys(d, envOf(map[string]string{"AZURE_KEY": "k", "AZURE_V1_KEY": "k2"})); err != nil {
		t.Errorf("keys set: %v", err)
	}
	d.Egress.UpstreamAuth = AuthAPIKey
	if err := CheckRouteKeys(d, envOf(map[string]string{"AZURE_KEY": "k", "AZURE_V1_KEY": "k2"})); err == nil ||
		!strings.Contains(err.Error(), "egress.upstream_auth: environment variable VESSEL_MODEL_KEY is not set") {
		t.Errorf("default route key: %v", err)
	}
}

// TestRoutesRefusedWithLine: each refusal names the file, the line of the
// offending key and the key.
func TestRoutesRefusedWithLine(t *testing.T) {
	for _, tc := range []struct{ route, tables, at, key, want string }{
		{"", "[models.x]\nurl = \"https://h/v1\"\nkey = \"sk-literal\"\n", "key = ", "models.x.key", `want key = "env:NAME"`},
		{"", "[models.x]\nurl = \"http://h/v1\"\n", "http://h/v1", "models.x.url", "plain HTTP"},
		{"", "[models.x]\nurl = \"https://h/v1\"\nauth = \"api-key\"\n", "auth = ", "models.x.auth", "sends a key"},
		{"", "[models.x]\nurl = \"https://h/v1\"\nauth = \"basic\"\n", "auth = ", "models.x.auth", `unknown auth "basic"`},
		{"", "[models.x]\nurl = \"https://h/v1\"\nkey = \"env:K\"\nauth = \"none\"\n", "key = ", "models.x.key", "sends no key"},
		{"", "[models.x]\nurl = \"https://h/v1\"\n[models.x.headers]\nAuthorization = \"Bearer a\"\n", "Authorization", "models.x.headers.Authorization", "may not set it"},
		{"", "[models.x]\nurl = \"https://h/v1\"\n[models.x.headers]\nConnection = \"close\"\n", "Connection", "models.x.headers.Connection", "hop-by-hop"},
		{"", "[models.x]\nurl = \"https://h/v1\"\n[models.x.headers]\napi-key = \"k\"\n", "api-key", "models.x.headers.api-key", "may not set it"},
		{"", "[models.x]\nurl = \"https://h/v1?api-version=1\"\n[models.x.query]\napi-version = \"2\"\n", "api-version = ", "models.x.query.api-version", "also in the URL"},
		{"", "[models.x]\nurl = \"https://h/v1\"\ntoken_param = \"max_output\"\n", "token_param", "models.x.token_param", "unknown token parameter"},
		{"", "[models.x]\nurl = \"https://h/v1\"\nprovider = \"grok\"\n", "provider", "models.x.provider", `unknown provider "grok"; allowed: anthropic, auto, azure, deepseek`},
		{"", "[models.x]\nurl = \"https://h/v1\"\nsend_back = [\"reasoning\", \"tool_calls\"]\n", "send_back", "models.x.send_back", `"tool_calls" is written by the vessel itself`},
		{"", "[models.x]\nurl = \"https://h/v1\"\nsend_back = [\"a\", \"a\"]\n", "send_back", "models.x.send_back", `"a" listed twice`},
		{"", "[models.x]\nurl = \"https://h/v1\"\nsend_back = [\"Tool_Calls\"]\n", "send_back", "models.x.send_back", `"Tool_Calls" is written by the vessel itself`},
		{"", "[models.default]\nurl = \"https://h/v1\"\n", "[models.default]", "models.default", "route of [egress] upstream_url"},
		{"", "[models.Bad]\nurl = \"https://h/v1\"\n", "[models.Bad]", "models.Bad", "invalid route name"},
		{"", "[models.x]\nurl = \"https://h/v1\"\nkey = \"env:VESSEL_EGRESS_TOKEN\"\n", "key = ", "models.x.key", "egress's own settings"},
		{"nowhere", "", "model_route", "agents[alpha].model_route", `unknown route "nowhere"`},
	} {
		t.Run(tc.key, func(t *testing.T) {
			files := withRoutes(tc.route, tc.tables)
			_, err := loadFixture(t, files)
			want := fmt.Sprintf("deployment.toml:%d: %s: ", lineOf(files["deploy/deployment.toml"], tc.at), tc.key)
			if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v\nwant %q … %q", err, want, tc.want)
			}
		})
	}
}

// TestUpstreamQueryAccepted: an Azure classic upstream_url with its
// api-version and upstream_auth = "api-key" loads (the egress accepts the
// same), a fragment is refused at its line.
func TestUpstreamQueryAccepted(t *testing.T) {
	env := map[string]string{}
	for k, v := range fixtureEnv {
		env[k] = v
	}
	dep := strings.Replace(fixture["deploy/deployment.toml"], `upstream_url = "env:UPSTREAM"`,
		"upstream_url = \"https://r.openai.azure.com/openai/deployments/d?api-version=2024-10-21\"\nupstream_auth = \"api-key\"", 1)
	if _, err := loadFixture(t, map[string]string{"deploy/deployment.toml": dep}); err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(dep, "?api-version", "#x?api-version", 1)
	_, err := loadFixture(t, map[string]string{"deploy/deployment.toml": bad})
	if want := fmt.Sprintf("deployment.toml:%d: egress.upstream_url: ", lineOf(bad, "upstream_url")); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("fragment: %v", err)
	}
	bad = strings.Replace(dep, `upstream_auth = "api-key"`, `upstream_auth = "key"`, 1)
	_, err = loadFixture(t, map[string]string{"deploy/deployment.toml": bad})
	if want := fmt.Sprintf("deployment.toml:%d: egress.upstream_auth: ", lineOf(bad, "upstream_auth")); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("auth: %v", err)
	}
}

// TestRouteProvider: a route's provider picks its profile and, without a
// token_param, the profile's token parameter; [egress] upstream_provider
// does the same for the route "default", and is refused at its line when
// unknown.
func TestRouteProvider(t *testing.T) {
	files := withRoutes("ds", "[models.ds]\nurl = \"https://h/v1\"\nprovider = \"deepseek\"\n\n[models.oa]\nurl = \"https://o/v1\"\nprovider = \"openai\"\n")
	d, err := loadFixture(t, files)
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Provider(&d.Agents[0]); got != "deepseek" {
		t.Errorf("provider %q", got)
	}
	if got := d.Provider(&d.Agents[1]); got != "" {
		t.Errorf("default route's provider %q, want none (auto)", got)
	}
	if d.Models["oa"].TokenParam != TokenParamMaxCompletionTokens || d.Models["ds"].TokenParam != TokenParamMaxTokens {
		t.Errorf("token params %q %q", d.Models["oa"].TokenParam, d.Models["ds"].TokenParam)
	}
	d.Egress.UpstreamProvider = "openai"
	if got := d.TokenParam(&d.Agents[1]); got != TokenParamMaxCompletionTokens {
		t.Errorf("default route on openai: token param %q", got)
	}
	if p := ProfileOf(""); p.TokenParam != TokenParamMaxTokens || p.SendBack != nil || !slices.Equal(p.Drop, []string{"index", "token_id"}) {
		t.Errorf("auto profile %+v", p)
	}

	if p := d.Profile(&d.Agents[0]); !slices.Equal(p.SendBack, []string{"reasoning_content"}) || len(p.CallSendBack) != 0 || p.CallSendBack == nil {
		t.Errorf("deepseek profile %+v", p)
	}
	d.Models["ds"] = ModelRoute{Provider: "deepseek", SendBack: &[]string{"reasoning_content", "extra_content"}}
	if p := d.Profile(&d.Agents[0]); !slices.Equal(p.SendBack, []string{"reasoning_content", "extra_content"}) || !slices.Equal(p.CallSendBack, p.SendBack) || p.Detect {
		t.Errorf("send_back override %+v", p)
	}
	d.Egress.UpstreamSendBack = &[]string{}
	if p := d.Profile(&d.Agents[1]); p.SendBack == nil || len(p.SendBack) != 0 || p.Detect {
		t.Errorf("upstream_send_back = [] gives %+v", p)
	}
	if p := ProfileOf("deepseek"); !slices.Equal(p.SendBack, []string{"reasoning_content"}) {
		t.Errorf("the table changed under an override: %+v", p)
	}

	dep := strings.Replace(fixture["deploy/deployment.toml"], "[egress]\n", "[egress]\nupstream_provider = \"nope\"\n", 1)
	files = map[string]string{"deploy/deployment.toml": dep}
	_, err = loadFixture(t, files)
	want := fmt.Sprintf("deployment.toml:%d: egress.upstream_provider: unknown provider \"nope\"", lineOf(dep, "upstream_provider"))
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v, want %q", err, want)
	}
}
