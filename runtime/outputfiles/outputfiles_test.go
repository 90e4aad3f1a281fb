package outputfiles

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/astraldeep/astralvessel-go/runtime/outputfiles/outputfilestest"
)

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
	mt, why := Check("plot.PNG", outputfilestest.TinyPNG(t), allowed)
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

func TestSniff(t *testing.T) { outputfilestest.RunSniff(t, Sniff) }

func FuzzCheck(f *testing.F) {
	for _, s := range outputfilestest.NameSeeds {
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
