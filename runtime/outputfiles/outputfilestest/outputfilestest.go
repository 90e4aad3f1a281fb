// Package outputfilestest is the one table of output-file cases the
// rules' own tests (runtime/outputfiles) and the sandbox's outbox
// (sandboxd/internal/outbox, which applies the same rules before the
// vessel applies them again) both run. It holds data and the loop that
// runs it, not the rules: it imports nothing of outputfiles, so the
// package's in-package tests may import it.
package outputfilestest

import (
	"bytes"
	"image"
	"image/png"
	"testing"
)

// TinyPNG is a real 1×1 PNG.
func TinyPNG(t testing.TB) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, 1, 1))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// SniffCase is content of a type (extension) and whether the content check
// passes it.
type SniffCase struct {
	Ext     string
	Content []byte
	OK      bool
}

// SniffCases are the content-check cases: each type's real content, and
// content that claims a type it is not.
func SniffCases(t testing.TB) []SniffCase {
	return []SniffCase{
		{"png", TinyPNG(t), true},
		{"svg", []byte(`<svg xmlns="http://www.w3.org/2000/svg"><g/></svg>`), true},
		{"csv", []byte("a,b\n1,2\n"), true},
		{"pdf", []byte("%PDF-1.7\n%%EOF\n"), true},
		{"png", []byte("\x89PNG\r\n\x1a\nshort"), false},
		{"svg", []byte(`<svg><g></svg>`), false},
		{"svg", []byte(`<html/>`), false},
		{"svg", []byte(`<svg/><svg/>`), false},
		{"svg", []byte(`text<svg/>`), false},
		{"svg", []byte(""), false},
		{"csv", []byte("a,b\n1\n"), false},
		{"pdf", []byte("%PDF-1.7 no trailer"), false},
		{"exe", []byte("MZ"), false},
	}
}

// RunSniff runs SniffCases through sniff (a refusal's reason, "" when
// passed).
func RunSniff(t *testing.T, sniff func(ext string, content []byte) string) {
	t.Helper()
	for _, c := range SniffCases(t) {
		why := sniff(c.Ext, c.Content)
		if c.OK && why != "" {
			t.Errorf("%s %.40q refused: %s", c.Ext, c.Content, why)
		}
		if !c.OK && why == "" {
			t.Errorf("%s %.40q accepted", c.Ext, c.Content)
		}
	}
}

// NameSeeds are file names, plain and not, that the fuzz targets of names
// start from.
var NameSeeds = []string{"a.png", ".x.png", "../a.png", "a/b.csv", "a b.csv", "ok-1_2.pdf", "\xff.svg"}
