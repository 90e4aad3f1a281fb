package jwt

// Tests for findings J1–J4 of issue 13 against the hand-written validation
// that preceded jwx. Each failed on that code (it accepted the token, or
// gave it another owner) and passes now. They use only Verify and the
// fixture helpers of jwt_test.go.

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// signedPayload signs exactly these claim bytes (not re-encoded JSON), so a
// test controls member order, duplicates, escapes and raw bytes.
func signedPayload(t *testing.T, f *fixture, claims string) string {
	t.Helper()
	return rawTokenBytes(t, map[string]any{"alg": "RS256", "kid": f.rs.kid, "typ": "JWT"}, []byte(claims), f.rs)
}

// claimsJSON is goodClaims written by hand, with extra members appended
// verbatim after the standard ones.
func claimsJSON(sub, extra string) string {
	return fmt.Sprintf(`{"iss":%q,"sub":%s,"aud":["account","research-vessel"],"azp":"astral-orchestrator","exp":%d,"iat":%d,"scope":"openid tools:read"%s}`,
		iss, sub, t0.Add(5*time.Minute).Unix(), t0.Add(-time.Minute).Unix(), extra)
}

func mustRefuse(t *testing.T, f *fixture, tok string) {
	t.Helper()
	p, err := f.v.Verify(context.Background(), tok)
	if err == nil {
		t.Fatalf("accepted, owner %q", p.Owner)
	}
	if !errors.Is(err, ErrInvalidToken) {
		t.Fatalf("error does not wrap ErrInvalidToken: %v", err)
	}
}

// TestJ1ClaimNamesAreExactAndUnique: a claim name is matched case-sensitively
// (SUB, AZP, Aud, EXP are unknown private claims that change nothing), and a
// name that appears twice refuses the token instead of letting the last one
// win.
func TestJ1ClaimNamesAreExactAndUnique(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()

	t.Run("SUB does not override sub", func(t *testing.T) {
		p, err := f.v.Verify(ctx, signedPayload(t, f, claimsJSON(`"mallory"`, `,"SUB":"bob"`)))
		if err != nil {
			t.Fatalf("refused: %v", err)
		}
		if p.Owner != "astral|mallory" || p.Subject != "mallory" {
			t.Fatalf("owner %q, subject %q: want astral|mallory", p.Owner, p.Subject)
		}
	})
	expired := t0.Add(-time.Hour).Unix()
	future := t0.Add(time.Hour).Unix()
	refused := map[string]string{
		"AZP overrides a disallowed azp": fmt.Sprintf(`{"iss":%q,"sub":"u","aud":"research-vessel","azp":"someone-else","AZP":"astral-orchestrator","exp":%d}`, iss, future),
		"Aud overrides a wrong aud":      fmt.Sprintf(`{"iss":%q,"sub":"u","aud":"account","Aud":"research-vessel","azp":"astral-orchestrator","exp":%d}`, iss, future),
		"EXP overrides an expired exp":   fmt.Sprintf(`{"iss":%q,"sub":"u","aud":"research-vessel","azp":"astral-orchestrator","exp":%d,"EXP":%d}`, iss, expired, future),
		"sub twice":                      claimsJSON(`"mallory"`, `,"sub":"bob"`),
		"exp twice":                      fmt.Sprintf(`{"iss":%q,"sub":"u","aud":"research-vessel","azp":"astral-orchestrator","exp":%d,"exp":%d}`, iss, expired, future),
		"azp twice":                      fmt.Sprintf(`{"iss":%q,"sub":"u","aud":"research-vessel","azp":"someone-else","azp":"astral-orchestrator","exp":%d}`, iss, future),
		"aud twice":                      fmt.Sprintf(`{"iss":%q,"sub":"u","aud":"account","aud":"research-vessel","azp":"astral-orchestrator","exp":%d}`, iss, future),
	}
	for name, claims := range refused {
		t.Run(name, func(t *testing.T) { mustRefuse(t, f, signedPayload(t, f, claims)) })
	}
}

// TestJ2SubjectsAreExactUTF8: invalid UTF-8 and lone surrogates are refused,
// not turned into U+FFFD, so two distinct subjects can never share an owner;
// a subject that really is U+FFFD keeps it.
func TestJ2SubjectsAreExactUTF8(t *testing.T) {
	f := newFixture(t)
	mustRefuse(t, f, signedPayload(t, f, claimsJSON("\"user-\xff\"", "")))
	mustRefuse(t, f, signedPayload(t, f, claimsJSON(`"user-\ud800"`, "")))
	mustRefuse(t, f, signedPayload(t, f, claimsJSON(`"user-\udc00"`, "")))
	p, err := f.v.Verify(context.Background(), signedPayload(t, f, claimsJSON(`"user-\ufffd"`, "")))
	if err != nil {
		t.Fatalf("a real U+FFFD subject was refused: %v", err)
	}
	if p.Owner != "astral|user-\uFFFD" {
		t.Fatalf("owner %q", p.Owner)
	}
	// A valid surrogate pair is one character, written either way.
	p, err = f.v.Verify(context.Background(), signedPayload(t, f, claimsJSON(`"user-\ud83d\ude00"`, "")))
	if err != nil || p.Owner != "astral|user-😀" {
		t.Fatalf("surrogate pair: %v, %+v", err, p)
	}
}

// TestJ3DatesAreNumbers: exp, nbf and iat must be JSON numbers; a date in a
// string is refused even when its digits would be valid.
func TestJ3DatesAreNumbers(t *testing.T) {
	f := newFixture(t)
	future := t0.Add(time.Hour).Unix()
	for _, claims := range []string{
		fmt.Sprintf(`{"iss":%q,"sub":"u","aud":"research-vessel","azp":"astral-orchestrator","exp":"%d"}`, iss, future),
		fmt.Sprintf(`{"iss":%q,"sub":"u","aud":"research-vessel","azp":"astral-orchestrator","exp":%d,"nbf":"%d"}`, iss, future, t0.Unix()),
		fmt.Sprintf(`{"iss":%q,"sub":"u","aud":"research-vessel","azp":"astral-orchestrator","exp":%d,"iat":"%d"}`, iss, future, t0.Unix()),
	} {
		mustRefuse(t, f, signedPayload(t, f, claims))
	}
}

// TestJ4OneSpellingPerToken: the signature segment is accepted only as
// unpadded base64url with zero trailing bits; the padded, standard-alphabet
// and non-canonical spellings of the same signature are refused.
func TestJ4OneSpellingPerToken(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	// Sign until the signature holds '-' or '_', so its standard-alphabet
	// spelling differs (almost always the first one).
	var tok string
	for i := 0; i < 50 && !strings.ContainsAny(tok[strings.LastIndexByte(tok, '.')+1:], "-_"); i++ {
		tok = sign(t, f.rs, with(goodClaims(), "jti", fmt.Sprint(i)))
	}
	if _, err := f.v.Verify(ctx, tok); err != nil {
		t.Fatalf("canonical token refused: %v", err)
	}
	cut := strings.LastIndexByte(tok, '.')
	signing, sigText := tok[:cut], tok[cut+1:]
	sig, err := base64.RawURLEncoding.DecodeString(sigText)
	if err != nil {
		t.Fatal(err)
	}
	// 256 signature bytes leave 4 spare bits in the last character: setting
	// one gives another spelling of the same bytes.
	last := strings.IndexByte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", sigText[len(sigText)-1])
	nonCanonical := sigText[:len(sigText)-1] + string("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"[last|1])
	spellings := map[string]string{
		"padded base64url":       base64.URLEncoding.EncodeToString(sig),
		"standard base64":        base64.StdEncoding.EncodeToString(sig),
		"standard, raw":          base64.RawStdEncoding.EncodeToString(sig),
		"non-zero trailing bits": nonCanonical,
	}
	for name, s := range spellings {
		t.Run(name, func(t *testing.T) {
			if s == sigText {
				t.Fatalf("test setup: %s spelling equals the canonical one", name)
			}
			mustRefuse(t, f, signing+"."+s)
		})
	}
}
