package outputfiles

import (
	"bytes"
	"image"
	"image/png"
	"path/filepath"
	"strings"
	"testing"
)

func tinyPNG(t testing.TB) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, 1, 1))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestCheckNames(t *testing.T) {
	allowed := AllowedTypes([]string{"png", ".CSV", "exe"})
	if len(allowed) != 2 || !allowed["png"] || !allowed["csv"] {
		t.Fatalf("AllowedTypes kept %v, want png and csv only", allowed)
	}
	for _, name := range []string{"plot.png", "Data_1-2.csv", "a.b.PNG", strings.Repeat("a", 124) + ".png"} {
		if _, why := CheckName(name, allowed); why != "" {
			t.Errorf("%q refused: %s", name, why)
		}
	}
	for _, name := range []string{
		"", ".hidden.png", "../up.png", "dir/a.png", `dir\a.png`, "/abs.png", "a b.png",
		"caf\xe9.png", "bad\xff\xfe.png", "tab\t.png", "nl\n.png", "nul\x00.png", "\u00e9t\u00e9.png",
		strings.Repeat("a", 125) + ".png", "noext", "page.html", "run.exe", "plot.svg",
	} {
		if ext, why := CheckName(name, allowed); why == "" {
			t.Errorf("%q accepted as %q", name, ext)
		}
	}
}

func TestCheck(t *testing.T) {
	allowed := AllowedTypes(Types)
	mt, why := Check("plot.PNG", tinyPNG(t), allowed)
	if why != "" || mt != "image/png" {
		t.Fatalf("a real PNG: media type %q, refused %q", mt, why)
	}
	for name, content := range map[string][]byte{
		"page.png":  []byte("<!doctype html><script>alert(1)</script>"),
		"page.svg":  []byte("<html><body>hi</body></html>"),
		"page.pdf":  []byte("<html></html>"),
		"big.csv":   bytes.Repeat([]byte("a\n"), MaxFileBytes/2+1),
		"empty.csv": nil,
	} {
		if mt, why := Check(name, content, allowed); why == "" {
			t.Errorf("%s accepted as %q", name, mt)
		}
	}
	if why := CheckSize(MaxFileBytes); why != "" {
		t.Errorf("a file of exactly MaxFileBytes refused: %s", why)
	}
	for _, ext := range Types {
		if MediaType(ext) == "" || MediaType("."+strings.ToUpper(ext)) != MediaType(ext) {
			t.Errorf("no media type for %q", ext)
		}
	}
	if MediaType("html") != "" {
		t.Error("html has a media type")
	}
}

func TestTally(t *testing.T) {
	var tally Tally
	for i := range MaxPerTurn {
		if !tally.Reserve(1) {
			t.Fatalf("file %d of %d refused", i+1, MaxPerTurn)
		}
	}
	if tally.Reserve(0) {
		t.Fatalf("file %d accepted", MaxPerTurn+1)
	}
	var byBytes Tally
	if !byBytes.Reserve(MaxTurnBytes-1) || byBytes.Reserve(2) || !byBytes.Reserve(1) || byBytes.Reserve(1) {
		t.Fatal("the byte limit is not exactly MaxTurnBytes")
	}
}

func TestSniff(t *testing.T) {
	good := map[string][]byte{
		"png": tinyPNG(t),
		"svg": []byte(`<svg xmlns="http://www.w3.org/2000/svg"><g/></svg>`),
		"csv": []byte("a,b\n1,2\n"),
		"pdf": []byte("%PDF-1.7\n%%EOF\n"),
	}
	for ext, b := range good {
		if why := Sniff(ext, b); why != "" {
			t.Errorf("%s refused: %s", ext, why)
		}
	}
	bad := map[string][]byte{
		"png": []byte("\x89PNG\r\n\x1a\nshort"),
		"svg": []byte(`<svg><g></svg>`),
		"csv": []byte("a,b\n1\n"),
		"pdf": []byte("%PDF-1.7 no trailer"),
		"exe": []byte("MZ"),
	}
	for ext, b := range bad {
		if why := Sniff(ext, b); why == "" {
			t.Errorf("%s accepted", ext)
		}
	}
}

func FuzzCheck(f *testing.F) {
	for _, s := range []string{"a.png", ".x.png", "../a.png", "a/b.csv", "a b.csv", "ok-1_2.pdf", "\xff.svg"} {
		f.Add(s, []byte("%PDF-1.4\n%%EOF"))
	}
	allowed := AllowedTypes(Types)
	f.Fuzz(func(t *testing.T, name string, content []byte) {
		mt, why := Check(name, content, allowed)
		if why != "" {
			return
		}
		if !filepath.IsLocal(name) || filepath.Base(name) != name || name[0] == '.' || mt == "" {
			t.Fatalf("%q passed as %q", name, mt)
		}
	})
}
