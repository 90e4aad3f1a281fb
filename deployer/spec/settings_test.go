package spec

import (
	"fmt"
	"strings"
	"testing"
)

func withModelTable(extra string) map[string]string {
	return map[string]string{"agents/alpha/vessel.toml": strings.Replace(alphaManifest, "max_steps = 8", "max_steps = 8\n"+extra, 1)}
}

func TestRequestSettingsLoaded(t *testing.T) {
	d, err := loadFixture(t, withModelTable(`max_output_tokens = 900
temperature = 0.2
top_p = 0.9
stop = ["END"]
seed = 7
reasoning_effort = "low"
[model.response_format]
type = "json_schema"
name = "birds"
strict = true
schema = { type = "object", properties = { count = { type = "integer" } }, required = ["count"] }
[model.extra_body]
thinking = { type = "disabled" }
`))
	if err != nil {
		t.Fatal(err)
	}
	s := d.Agents[0].Manifest.Model.RequestSettings
	if s.MaxOutputTokens != 900 || *s.Temperature != 0.2 || *s.TopP != 0.9 || s.Stop[0] != "END" || *s.Seed != 7 ||
		s.ReasoningEffort != "low" || s.ResponseFormat.Name != "birds" || s.ExtraBody["thinking"] == nil {
		t.Errorf("settings %+v", s)
	}
}

// TestRequestSettingsRefusedWithLine: extra_body may not override what the
// vessel owns; every refusal names the line of its key.
func TestRequestSettingsRefusedWithLine(t *testing.T) {
	for _, tc := range []struct{ extra, at, key, want string }{
		{"[model.extra_body]\nmessages = []\n", "messages", "model.extra_body.messages", "written by the vessel"},
		{"[model.extra_body]\nstream = false\n", "stream", "model.extra_body.stream", "written by the vessel"},
		{"[model.extra_body]\nstream_options = { include_usage = false }\n", "stream_options", "model.extra_body.stream_options", "written by the vessel"},
		{"[model.extra_body]\nmodel = \"other\"\n", "model = ", "model.extra_body.model", "written by the vessel"},
		{"[model.extra_body]\ntools = []\n", "tools = []", "model.extra_body.tools", "written by the vessel"},
		{"[model.extra_body]\nmax_tokens = 5\n", "max_tokens", "model.extra_body.max_tokens", "model.max_output_tokens"},
		{"temperature = 3.0\n", "temperature", "model.temperature", "out of range"},
		{"top_p = 1.5\n", "top_p", "model.top_p", "out of range"},
		{"reasoning_effort = \"max\"\n", "reasoning_effort", "model.reasoning_effort", "unknown effort"},
		{"max_output_tokens = -1\n", "max_output_tokens", "model.max_output_tokens", "out of range"},
		{"stop = [\"a\", \"b\", \"c\", \"d\", \"e\"]\n", "stop", "model.stop", "at most 4"},
		{"[model.response_format]\ntype = \"json_schema\"\nname = \"x\"\n", "[model.response_format]", "model.response_format.schema", "required with json_schema"},
		{"[model.response_format]\ntype = \"yaml\"\n", "type = \"yaml\"", "model.response_format.type", "unknown type"},
	} {
		t.Run(tc.key, func(t *testing.T) {
			files := withModelTable(tc.extra)
			_, err := loadFixture(t, files)
			want := fmt.Sprintf("alpha/vessel.toml:%d: %s: ", lineOf(files["agents/alpha/vessel.toml"], tc.at), tc.key)
			if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v\nwant %q … %q", err, want, tc.want)
			}
		})
	}
}
