package spec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProvidersDocumented keeps the profile table and docs/models.md in
// step: every profile is a row of "Provider profiles" with its default
// token parameter, and the route key `provider` lists every name.
func TestProvidersDocumented(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "models.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	_, section, ok := strings.Cut(doc, "## Provider profiles")
	if !ok {
		t.Fatal("docs/models.md has no Provider profiles section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	rows := map[string]string{}
	for _, l := range strings.Split(section, "\n") {
		cells := strings.Split(l, "|")
		if len(cells) < 4 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		for _, n := range strings.Split(cells[1], ",") {
			rows[strings.Trim(strings.TrimSpace(n), "`")] = strings.Trim(strings.TrimSpace(cells[2]), "`")
		}
	}
	_, keyRow, _ := strings.Cut(doc, "| `provider` | string |")
	keyRow, _, _ = strings.Cut(keyRow, "\n")
	for _, n := range ProviderNames() {
		if got, ok := rows[n]; !ok || got != Providers[n].TokenParam {
			t.Errorf("profile %s: documented row %q (present %v), token param %s", n, got, ok, Providers[n].TokenParam)
		}
		if !strings.Contains(keyRow, "`"+n+"`") {
			t.Errorf("profile %s is not listed under the route key provider", n)
		}
	}
	if len(rows) != len(Providers) {
		t.Errorf("documented profiles %v, table has %d", rows, len(Providers))
	}
}
