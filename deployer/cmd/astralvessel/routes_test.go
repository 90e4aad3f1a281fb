package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestValidateRoutes: validate refuses a route the egress would refuse,
// at the line of its key, and a route whose key variable is not set (the
// egress would not start), with the hint that says where it comes from.
func TestValidateRoutes(t *testing.T) {
	setExampleEnv(t)
	pkg, err := filepath.Abs("../../../examples/field-guide-reader")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "deployment.toml")
	write := func(headers string) {
		src := "[egress]\nupstream_url = \"env:VESSEL_UPSTREAM_MODEL_URL\"\n\n" +
			"[models.azure]\nurl = \"https://r.openai.azure.com/openai/deployments/d?api-version=2024-10-21\"\nkey = \"env:AZ_ROUTE_TEST_KEY\"\nauth = \"api-key\"\n" +
			headers + "\n[[agents]]\nid = \"reader\"\npackage = \"" + pkg + "\"\nmodel_route = \"azure\"\n"
		if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("headers = { \"api-key\" = \"sneaky\" }\n")
	code, _, errOut := run("validate", file)
	if code != 1 || !strings.Contains(errOut, file+":8: models.azure.headers.api-key: Api-Key is set by the egress") {
		t.Fatalf("exit %d:\n%s", code, errOut)
	}
	os.Unsetenv("AZ_ROUTE_TEST_KEY")
	write("")
	code, _, errOut = run("validate", file)
	if code != 1 || !strings.Contains(errOut, file+":6: models.azure.key: environment variable AZ_ROUTE_TEST_KEY is not set") ||
		!strings.Contains(errOut, "hint: AZ_ROUTE_TEST_KEY come from the environment") {
		t.Fatalf("exit %d:\n%s", code, errOut)
	}
	t.Setenv("AZ_ROUTE_TEST_KEY", "az-secret")
	if code, out, errOut := run("validate", file); code != 0 || strings.Contains(out+errOut, "az-secret") {
		t.Fatalf("exit %d:\n%s%s", code, out, errOut)
	}
}
