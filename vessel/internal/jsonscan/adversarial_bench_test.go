package jsonscan

import (
	"encoding/json"
	"strings"
	"testing"
)

// lateFallbackDoc is a large plain document whose only escaped key
// comes last: Skip reads it all, then json.Valid reads it all again.
var lateFallbackDoc = []byte(`{"a":[` + strings.Repeat(`"plain text of a history message, long enough",`, 20000) + `1],"\u0062":1}`)

func BenchmarkAdversarialValidLateFallback(b *testing.B) {
	b.SetBytes(int64(len(lateFallbackDoc)))
	for b.Loop() {
		if !Valid(lateFallbackDoc) {
			b.Fatal("invalid")
		}
	}
}

func BenchmarkAdversarialJSONValidLateFallback(b *testing.B) {
	b.SetBytes(int64(len(lateFallbackDoc)))
	for b.Loop() {
		if !json.Valid(lateFallbackDoc) {
			b.Fatal("invalid")
		}
	}
}
