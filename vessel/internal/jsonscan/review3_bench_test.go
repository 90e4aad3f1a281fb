package jsonscan

import (
	"encoding/json"
	"strings"
	"testing"
)

// review3LateFallback is a large plain document whose only escaped key
// comes last: Skip reads it all, then json.Valid reads it all again.
var review3LateFallback = []byte(`{"a":[` + strings.Repeat(`"plain text of a history message, long enough",`, 20000) + `1],"\u0062":1}`)

func BenchmarkReview3ValidLateFallback(b *testing.B) {
	b.SetBytes(int64(len(review3LateFallback)))
	for b.Loop() {
		if !Valid(review3LateFallback) {
			b.Fatal("invalid")
		}
	}
}

func BenchmarkReview3JSONValidLateFallback(b *testing.B) {
	b.SetBytes(int64(len(review3LateFallback)))
	for b.Loop() {
		if !json.Valid(review3LateFallback) {
			b.Fatal("invalid")
		}
	}
}
