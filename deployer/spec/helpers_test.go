package spec

import (
	"os"
	"path/filepath"
	"testing"
)

// fixture is a small deployment written to a temp folder: two agents, one
// with its own Dockerfile, a data mount, a service tool and an issuer.
var fixture = map[string]string{
	"deploy/deployment.toml": `# a test deployment
[vessel]
project = "test"

[egress]
upstream_url = "env:UPSTREAM"

[[apps]]
id = "web"
key_sha256 = "env:APP_SHA"
agents = ["alpha", "beta"]

[[issuers]]
id = "idp"
issuer = "https://idp.example.test/realm"
audience = "vessel"
jwks_file = "jwks.json"
agents = ["alpha"]

[[agents]]
id = "alpha"
package = "../agents/alpha"
[agents.sandbox]
scratch = "64MB"
dockerfile = "../agents/alpha/sandbox/Dockerfile"
mounts = [{ source = "../data", target = "/data/guide" }]
[agents.services.records]
url = "http://app:8000"
headers = { "X-Token" = "env:RECORDS_TOKEN" }

[[agents]]
id = "beta"
package = "../agents/beta"
`,
	"deploy/jwks.json":         `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}`,
	"data/birds.json":          `[{"name":"Glimmer wren"}]`,
	"agents/alpha/vessel.toml": alphaManifest,
	"agents/alpha/prompt.md":   "You are alpha.\n",
	"agents/alpha/extra.md":    "Extra notes.\n",
	"agents/alpha/tools/species.toml": `name = "species"
description = "List species."
command = ["python3", "{package}/tools/species.py"]
scope = "tools:read"
`,
	"agents/alpha/tools/species.py": "print('[]')\n",
	"agents/alpha/tools/lookup.toml": `name = "lookup"
description = "Look a record up."
service = "records"
path = "/agent-tools/lookup"
scope = "tools:read"
[parameters]
type = "object"
properties = { id = { type = "string" } }
`,
	"agents/alpha/sandbox/Dockerfile":  "FROM astralvessel-sandboxd:local\n# tools\nCOPY bin/ /opt/bin/\nCOPY --from=builder /x /y\nADD [\"conf.txt\", \"/etc/x\"]\n",
	"agents/alpha/sandbox/bin/tool.sh": "#!/bin/sh\necho hi\n",
	"agents/alpha/sandbox/conf.txt":    "setting=1\n",
	"agents/beta/vessel.toml": `name = "Beta"
description = "Reads things."
[model]
name = "test-model"
[tools]
enabled = ["read", "glob"]
`,
	"agents/beta/prompt.md": "You are beta.\n",
}

const alphaManifest = `name = "Alpha"
description = "Answers from the guide."
version = "0.2.0"
examples = ["Which wrens live here?"]
prompt_append = ["extra.md"]

[model]
name = "test-model"
max_steps = 8

[tools]
enabled = ["read", "grep", "bash", "present"]

[output]
files = ["png", "csv"]
primitives = true
`

var fixtureEnv = map[string]string{
	"UPSTREAM":      "https://models.example.test/v1",
	"APP_SHA":       "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
	"RECORDS_TOKEN": "secret-token",
}

func envOf(m map[string]string) Env {
	return func(name string) (string, bool) { v, ok := m[name]; return v, ok }
}

// writeTree writes files under dir, replacing any given overrides; a value
// of "\x00" deletes the file.
func writeTree(t testing.TB, dir string, files map[string]string, overrides map[string]string) {
	t.Helper()
	all := map[string]string{}
	for k, v := range files {
		all[k] = v
	}
	for k, v := range overrides {
		all[k] = v
	}
	for name, content := range all {
		if content == "\x00" {
			continue
		}
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if filepath.Ext(p) == ".sh" {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
}

func loadFixture(t testing.TB, overrides map[string]string) (*Deployment, error) {
	t.Helper()
	dir := t.TempDir()
	writeTree(t, dir, fixture, overrides)
	return LoadDeployment(filepath.Join(dir, "deploy", "deployment.toml"), envOf(fixtureEnv))
}
