package a2aserver

import (
	"slices"
	"testing"

	"github.com/astraldeep/astralvessel-go/vessel/transcript"
)

func TestFileFilter(t *testing.T) {
	for _, c := range []struct {
		accepted []string
		allowed  []string // of image/png, text/csv, application/pdf
	}{
		{nil, []string{"image/png", "text/csv", "application/pdf"}},
		{[]string{"text/markdown", transcript.MediaType, MediaPrimitives}, []string{"image/png", "text/csv", "application/pdf"}},
		{[]string{"text/markdown", "image/png"}, []string{"image/png"}},
		{[]string{"TEXT/CSV"}, []string{"text/csv"}},
		{[]string{"image/*"}, []string{"image/png"}},
		{[]string{"*/*", "text/markdown"}, []string{"image/png", "text/csv", "application/pdf"}},
		{[]string{"text/markdown", "application/vnd.astralvessel.no-files"}, nil}, // the Go client's "no files"
		{[]string{"png"}, []string{"image/png", "text/csv", "application/pdf"}},   // not a media type: ignored
	} {
		f := fileFilter(c.accepted)
		var got []string
		for _, mt := range []string{"image/png", "text/csv", "application/pdf"} {
			if f == nil || f(mt) {
				got = append(got, mt)
			}
		}
		if !slices.Equal(got, c.allowed) {
			t.Errorf("fileFilter(%q) lets through %v, want %v", c.accepted, got, c.allowed)
		}
	}
}
