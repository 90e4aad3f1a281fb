package a2aserver

import "testing"

// TestURNEqual: the prefix and namespace id of a requested extension URN
// match in any case (RFC 8141), the rest only exactly.
func TestURNEqual(t *testing.T) {
	const uri = "urn:astralvessel:ext:push-working:v1"
	for in, want := range map[string]bool{
		uri:                                    true,
		"URN:AstralVessel:ext:push-working:v1": true,
		"urn:astralvessel:EXT:push-working:v1": false,
		"urn:astralvessel:ext:push-working:v2": false,
		"urn:astralvessel":                     false,
		"urn:":                                 false,
		"":                                     false,
		"https://example.test/ext":             false,
	} {
		if got := urnEqual(in, uri); got != want {
			t.Errorf("urnEqual(%q) = %v, want %v", in, got, want)
		}
	}
	if !urnEqual("https://example.test/ext", "https://example.test/ext") {
		t.Error("a URI that is not a URN must equal itself")
	}
}
