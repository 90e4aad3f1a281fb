package redact

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// TestSecretNeverPrints prints a Secret every way the project's code
// could: fmt's verbs (alone, in a struct, behind a pointer, wrapped in an
// error), JSON, and zap's JSON encoder through zap.Any and zap.Stringer.
func TestSecretNeverPrints(t *testing.T) {
	const value = "sk-planted-0123456789"
	s := Secret(value)
	type holder struct {
		Name  string
		Token Secret
		Ptr   *Secret
	}
	h := holder{Name: "n", Token: s, Ptr: &s}
	var out []string
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%10s"} {
		out = append(out, fmt.Sprintf(verb, s), fmt.Sprintf(verb, h), fmt.Sprintf(verb, &h))
	}
	out = append(out, fmt.Errorf("refused %v: %w", h, errors.New("bad")).Error(), fmt.Sprint(s), fmt.Sprintln(h))
	j, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, string(j))
	var buf bytes.Buffer
	log := zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(&buf), zap.DebugLevel))
	log.Info("x", zap.Any("any", s), zap.Any("holder", h), zap.Stringer("str", s), Field("field", value))
	out = append(out, buf.String())
	for _, o := range out {
		if strings.Contains(o, value) || strings.Contains(o, fmt.Sprintf("%x", value)) {
			t.Fatalf("the secret printed: %s", o)
		}
	}
	if !strings.Contains(buf.String(), Mark) || s.Reveal() != value {
		t.Fatalf("log %s, reveal %q", buf.String(), s.Reveal())
	}
}

func TestScrub(t *testing.T) {
	for _, tc := range []struct {
		in      string
		secrets []string
		want    string
	}{
		{"token abc-123-xyz in text", []string{"abc-123-xyz"}, "token [redacted] in text"},
		{"long-token and long", []string{"long", "long-token"}, "[redacted] and [redacted]"},
		{"short ab stays", []string{"ab", ""}, "short ab stays"},
		{"twice s3cr3t s3cr3t", []string{"s3cr3t"}, "twice [redacted] [redacted]"},
		{"nothing", nil, "nothing"},
	} {
		if got := Scrub(tc.in, tc.secrets...); got != tc.want {
			t.Errorf("Scrub(%q, %q) = %q, want %q", tc.in, tc.secrets, got, tc.want)
		}
	}
	if !Contains("a s3cr3t b", "", "s3cr3t") || Contains("a b", "", "zz") {
		t.Fatal("Contains")
	}
}
