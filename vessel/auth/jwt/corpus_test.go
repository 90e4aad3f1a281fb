package jwt

import (
	"context"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jws"
)

// The attack corpus: tokens that must be refused, and valid tokens that must
// still be accepted, all against the fixture's issuers (a JWKS served by an
// httptest server on loopback, and a jwks_file).

type corpusToken struct {
	name  string
	token string
	owner string // for a valid token: the owner it must get
}

var seg = base64.RawURLEncoding.EncodeToString

// signSegments signs header and claims given as exact JSON text, with alg
// (not necessarily the header's, for lying-header cases).
func signSegments(t testing.TB, s signer, alg jwa.SignatureAlgorithm, header, claims string) string {
	t.Helper()
	signing := seg([]byte(header)) + "." + seg([]byte(claims))
	signer, err := jws.SignerFor(alg)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := signer.Sign(s.key, []byte(signing))
	if err != nil {
		t.Fatal(err)
	}
	return signing + "." + seg(sig)
}

// rsHeader is the RS256 header of the fixture's RSA key.
func rsHeader(f *fixture) string {
	return fmt.Sprintf(`{"alg":"RS256","kid":%q,"typ":"JWT"}`, f.rs.kid)
}

// claimsWith writes goodClaims as JSON text with member replacements:
// name -> raw JSON value ("" drops it); new names are appended.
func claimsWith(kv ...string) string {
	order := []string{"iss", "sub", "aud", "azp", "exp", "iat", "scope"}
	vals := map[string]string{
		"iss": fmt.Sprintf("%q", iss), "sub": `"user-42"`, "aud": `["account","research-vessel"]`,
		"azp": `"astral-orchestrator"`, "exp": fmt.Sprint(t0.Add(5 * time.Minute).Unix()),
		"iat": fmt.Sprint(t0.Add(-time.Minute).Unix()), "scope": `"openid tools:read tools:search"`,
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if _, ok := vals[kv[i]]; !ok {
			order = append(order, kv[i])
		}
		vals[kv[i]] = kv[i+1]
	}
	var b strings.Builder
	b.WriteByte('{')
	for _, name := range order {
		if vals[name] == "" {
			continue
		}
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%q:%s", name, vals[name])
	}
	b.WriteByte('}')
	return b.String()
}

// respell swaps the first `from` byte of segment i (0 header, 1 payload,
// 2 signature) for `to`, varying a nonce claim until the segment has one.
func respell(t testing.TB, f *fixture, i int, from, to byte) string {
	t.Helper()
	for n := 0; n < 2000; n++ {
		// '~' and '?' three times in a row: one of each lands where
		// base64 spells it '-' or '_'.
		tok := signSegments(t, f.rs, jwa.RS256(), fmt.Sprintf(`{"alg":"RS256","kid":%q,"n":"~~~???%d"}`, f.rs.kid, n), claimsWith("jti", fmt.Sprintf(`"~~~???%d"`, n)))
		parts := strings.Split(tok, ".")
		if j := strings.IndexByte(parts[i], from); j >= 0 {
			parts[i] = parts[i][:j] + string(to) + parts[i][j+1:]
			return strings.Join(parts, ".")
		}
	}
	t.Fatalf("no segment %d with %q found", i, from)
	return ""
}

// reencodeSegment re-encodes segment i of tok with enc.
func reencodeSegment(t testing.TB, tok string, i int, enc *base64.Encoding) string {
	t.Helper()
	parts := strings.Split(tok, ".")
	b, err := base64.RawURLEncoding.DecodeString(parts[i])
	if err != nil {
		t.Fatal(err)
	}
	parts[i] = enc.EncodeToString(b)
	return strings.Join(parts, ".")
}

// setTrailingBit gives segment i's last character a non-zero spare bit (an
// alternative spelling of the same bytes), varying a nonce until it has
// spare bits.
func setTrailingBit(t testing.TB, f *fixture, i int) string {
	t.Helper()
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	for n := 0; n < 100; n++ {
		tok := signSegments(t, f.rs, jwa.RS256(), fmt.Sprintf(`{"alg":"RS256","kid":%q,"n":"%d"}`, f.rs.kid, n), claimsWith("jti", fmt.Sprintf(`"%d"`, n)))
		parts := strings.Split(tok, ".")
		if len(parts[i])%4 == 0 {
			continue // no spare bits
		}
		last := strings.IndexByte(alphabet, parts[i][len(parts[i])-1])
		parts[i] = parts[i][:len(parts[i])-1] + string(alphabet[last|1])
		return strings.Join(parts, ".")
	}
	t.Fatalf("no segment %d with spare bits", i)
	return ""
}

func attackCorpus(t testing.TB, f *fixture) []corpusToken {
	good := goodClaims()
	h := rsHeader(f)
	rs := func(claims string) string { return signSegments(t, f.rs, jwa.RS256(), h, claims) }
	at := func(d time.Duration) string { return fmt.Sprint(t0.Add(d).Unix()) }
	var c []corpusToken
	add := func(name, tok string) { c = append(c, corpusToken{name: name, token: tok}) }

	// Claim names: case variants never stand in for the real claim, and
	// any name twice refuses the token.
	add("ISS instead of iss", rs(claimsWith("iss", "", "ISS", fmt.Sprintf("%q", iss))))
	add("Sub instead of sub", rs(claimsWith("sub", "", "Sub", `"user-42"`)))
	add("AUD instead of aud", rs(claimsWith("aud", "", "AUD", `"research-vessel"`)))
	add("Exp instead of exp", rs(claimsWith("exp", "", "Exp", at(time.Hour))))
	add("AZP beside a wrong azp", rs(claimsWith("azp", `"someone-else"`, "AZP", `"astral-orchestrator"`)))
	add("EXP beside an expired exp", rs(claimsWith("exp", at(-time.Hour), "EXP", at(time.Hour))))
	add("Aud beside a wrong aud", rs(claimsWith("aud", `"account"`, "Aud", `"research-vessel"`)))
	add("sub twice", rs(claimsWith()[:len(claimsWith())-1]+`,"sub":"admin"}`))
	add("iss twice", rs(claimsWith()[:len(claimsWith())-1]+fmt.Sprintf(`,"iss":%q}`, iss)))
	add("scope twice", rs(claimsWith()[:len(claimsWith())-1]+`,"scope":"tools:execute"}`))
	add("duplicate inside a nested claim", rs(claimsWith("ctx", `{"a":1,"a":2}`)))
	noSub := claimsWith("sub", "")
	add("escaped claim name s\\u0075b", rs(noSub[:len(noSub)-1]+`,"s\u0075b":"user-42"}`))
	add("alg twice in the header", signSegments(t, f.rs, jwa.RS256(), fmt.Sprintf(`{"alg":"none","alg":"RS256","kid":%q}`, f.rs.kid), claimsWith()))
	add("kid twice in the header", signSegments(t, f.rs, jwa.RS256(), fmt.Sprintf(`{"alg":"RS256","kid":"nope","kid":%q}`, f.rs.kid), claimsWith()))
	add("ALG instead of alg", signSegments(t, f.rs, jwa.RS256(), fmt.Sprintf(`{"ALG":"RS256","kid":%q}`, f.rs.kid), claimsWith()))

	// Types of each claim.
	for _, tc := range []struct{ claim, value string }{
		{"iss", "42"}, {"iss", fmt.Sprintf("[%q]", iss)}, {"iss", "null"},
		{"sub", "42"}, {"sub", `["user-42"]`}, {"sub", "null"}, {"sub", "true"},
		{"aud", "42"}, {"aud", `["research-vessel",1]`}, {"aud", `{"research-vessel":true}`}, {"aud", "null"},
		{"azp", "42"}, {"azp", `["astral-orchestrator"]`},
		{"exp", fmt.Sprintf(`"%d"`, t0.Add(time.Hour).Unix())}, {"exp", `"2099-01-01T00:00:00Z"`}, {"exp", "true"}, {"exp", "null"}, {"exp", "[" + at(time.Hour) + "]"},
		{"nbf", fmt.Sprintf(`"%d"`, t0.Unix())}, {"iat", fmt.Sprintf(`"%d"`, t0.Unix())}, {"iat", "{}"},
		{"scope", `["tools:execute"]`}, {"scope", "1"}, {"scp", "1"}, {"scp", `[1]`}, {"jti", "1"},
	} {
		add(fmt.Sprintf("%s as %s", tc.claim, tc.value), rs(claimsWith(tc.claim, tc.value)))
	}
	add("claims are an array", rs(`[`+claimsWith()+`]`))
	add("claims are a string", rs(`"`+iss+`"`))
	add("claims with a byte order mark", rs("\ufeff"+claimsWith()))
	add("trailing data after the claims", rs(claimsWith()+` {}`))
	add("header kid as a number", signSegments(t, f.rs, jwa.RS256(), `{"alg":"RS256","kid":1}`, claimsWith()))
	add("header alg as a list", signSegments(t, f.rs, jwa.RS256(), fmt.Sprintf(`{"alg":["RS256"],"kid":%q}`, f.rs.kid), claimsWith()))

	// Encodings, padding and alphabets.
	valid := sign(t, f.rs, good)
	add("padded header", reencodeSegment(t, valid, 0, base64.URLEncoding))
	add("padded payload", reencodeSegment(t, valid, 1, base64.URLEncoding))
	add("padded signature", reencodeSegment(t, valid, 2, base64.URLEncoding))
	add("standard-alphabet signature", reencodeSegment(t, valid, 2, base64.StdEncoding))
	add("'+' in the header", respell(t, f, 0, '-', '+'))
	add("'/' in the payload", respell(t, f, 1, '_', '/'))
	add("'+' in the signature", respell(t, f, 2, '-', '+'))
	add("'/' in the signature", respell(t, f, 2, '_', '/'))
	add("spare bits set in the header", setTrailingBit(t, f, 0))
	add("spare bits set in the payload", setTrailingBit(t, f, 1))
	add("spare bits set in the signature", setTrailingBit(t, f, 2))
	add("line break in the signature", valid[:len(valid)-10]+"\n"+valid[len(valid)-10:])
	add("space in the payload", strings.Replace(valid, ".", ". ", 1))
	add("percent-encoded dot", strings.Replace(valid, ".", "%2E", 1))
	add("extra character in the signature", valid+"A")
	add("signature of length 1 mod 4", valid+"AAA")

	// Algorithms and keys.
	add("alg none", rawToken(map[string]any{"alg": "none", "typ": "JWT"}, good, nil))
	add("alg none with a signature", rawToken(map[string]any{"alg": "none", "kid": f.rs.kid}, good, []byte("x")))
	add("alg None", rawToken(map[string]any{"alg": "None", "kid": f.rs.kid}, good, []byte("x")))
	add("alg NONE", rawToken(map[string]any{"alg": "NONE", "kid": f.rs.kid}, good, []byte("x")))
	add("alg empty", rawToken(map[string]any{"alg": "", "kid": f.rs.kid}, good, []byte("x")))
	add("alg rs256 lower case", signSegments(t, f.rs, jwa.RS256(), fmt.Sprintf(`{"alg":"rs256","kid":%q}`, f.rs.kid), claimsWith()))
	add("alg ES256K", rawToken(map[string]any{"alg": "ES256K", "kid": f.ec.kid}, good, []byte("sig")))
	add("no alg", signSegments(t, f.rs, jwa.RS256(), fmt.Sprintf(`{"kid":%q}`, f.rs.kid), claimsWith()))
	rsaPub := f.rs.key.Public().(*rsa.PublicKey)
	derPub, _ := x509.MarshalPKIXPublicKey(rsaPub)
	for _, secret := range []struct {
		name string
		key  []byte
	}{{"PEM", pemOf(t, rsaPub)}, {"DER", derPub}, {"modulus", rsaPub.N.Bytes()}, {"JWKS", jwksOf(t, f.rs)}} {
		for _, alg := range []string{"HS256", "HS384", "HS512"} {
			hdr, _ := json.Marshal(map[string]any{"alg": alg, "kid": f.rs.kid, "typ": "JWT"})
			claims, _ := json.Marshal(good)
			signing := seg(hdr) + "." + seg(claims)
			add(fmt.Sprintf("%s with the RSA public key (%s) as secret", alg, secret.name), signing+"."+seg(hs256(secret.key, signing)))
		}
	}
	ecPub, _ := x509.MarshalPKIXPublicKey(f.ec.key.Public())
	ecSigning := seg([]byte(fmt.Sprintf(`{"alg":"HS256","kid":%q}`, f.ec.kid))) + "." + seg([]byte(claimsWith()))
	add("HS256 with the EC public key as secret", ecSigning+"."+seg(hs256(ecPub, ecSigning)))
	add("RS256 under the EC key's kid", signWith(t, f.rs, jwa.RS256(), f.ec.kid, good))
	add("ES384 under a P-256 key", signSegments(t, f.ec, jwa.ES256(), fmt.Sprintf(`{"alg":"ES384","kid":%q}`, f.ec.kid), claimsWith()))
	add("EdDSA header over an ES256 signature", signSegments(t, f.ec, jwa.ES256(), fmt.Sprintf(`{"alg":"EdDSA","kid":%q}`, f.ec.kid), claimsWith()))
	add("RS512 signature under an RS256 header", signSegments(t, f.rs, jwa.RS512(), h, claimsWith()))
	add("unknown kid", signWith(t, f.rs, jwa.RS256(), "nope", good))
	add("kid with a path", signWith(t, f.rs, jwa.RS256(), "../"+f.rs.kid, good))
	add("kid differing in case", signWith(t, f.rs, jwa.RS256(), strings.ToUpper(f.rs.kid), good))
	add("other issuer's key under astral's kid", signWith(t, f.other, jwa.RS256(), f.rs.kid, good))
	add("other issuer's key and kid", sign(t, f.other, good))
	add("partner token signed with astral's key", signWith(t, f.rs, jwa.RS256(), f.other.kid,
		map[string]any{"iss": "https://partner.example.test", "sub": "u", "aud": "vessel", "exp": t0.Add(time.Hour).Unix()}))
	tampered := strings.Split(valid, ".")
	add("tampered claims", tampered[0]+"."+seg([]byte(claimsWith("sub", `"admin"`)))+"."+tampered[2])
	add("tampered header", seg([]byte(fmt.Sprintf(`{"alg":"RS256","kid":%q}`, f.rs.kid)))+"."+tampered[1]+"."+tampered[2])
	add("crit header", rawToken(map[string]any{"alg": "RS256", "kid": f.rs.kid, "crit": []string{"exp"}}, good, []byte("s")))
	add("crit header, signed", signSegments(t, f.rs, jwa.RS256(), fmt.Sprintf(`{"alg":"RS256","kid":%q,"crit":["x"],"x":1}`, f.rs.kid), claimsWith()))
	otherJWK := strings.TrimSuffix(strings.TrimPrefix(string(jwksOf(t, f.other)), `{"keys":[`), `]}`)
	add("attacker's key embedded as jwk", signSegments(t, f.other, jwa.RS256(), `{"alg":"RS256","jwk":`+otherJWK+`}`, claimsWith()))
	add("attacker's key set named by jku", signSegments(t, f.other, jwa.RS256(), fmt.Sprintf(`{"alg":"RS256","kid":%q,"jku":"http://127.0.0.1:1/certs"}`, f.other.kid), claimsWith()))
	add("b64 false", rawToken(map[string]any{"alg": "RS256", "kid": f.rs.kid, "b64": false}, good, []byte("s")))

	// Issuer, audience, authorized party.
	add("wrong iss", rs(claimsWith("iss", `"https://evil.example.test/realms/Astral"`)))
	add("iss with a suffix", rs(claimsWith("iss", fmt.Sprintf("%q", iss+"x"))))
	add("iss with two slashes", rs(claimsWith("iss", fmt.Sprintf("%q", iss+"//"))))
	add("iss differing in case", rs(claimsWith("iss", fmt.Sprintf("%q", strings.ToUpper(iss)))))
	add("no iss", rs(claimsWith("iss", "")))
	add("wrong aud", rs(claimsWith("aud", `["account"]`)))
	add("aud differing in case", rs(claimsWith("aud", `"Research-Vessel"`)))
	add("no aud", rs(claimsWith("aud", "")))
	add("empty aud list", rs(claimsWith("aud", "[]")))
	add("wrong azp", rs(claimsWith("azp", `"someone-else"`)))
	add("no azp", rs(claimsWith("azp", "")))

	// Time, at the boundaries (skew 30 s, fixture clock at t0).
	add("exp exactly skew ago", rs(claimsWith("exp", at(-30*time.Second))))
	add("exp long ago", rs(claimsWith("exp", at(-24*time.Hour))))
	add("no exp", rs(claimsWith("exp", "")))
	add("exp 0", rs(claimsWith("exp", "0")))
	add("exp 0.5", rs(claimsWith("exp", "0.5")))
	add("exp negative", rs(claimsWith("exp", "-1")))
	add("exp huge", rs(claimsWith("exp", "1e300")))
	add("nbf one second past skew", rs(claimsWith("nbf", at(31*time.Second))))
	add("iat one second past skew", rs(claimsWith("iat", at(31*time.Second))))
	add("nbf huge", rs(claimsWith("nbf", "1e300")))

	// Subject, and UTF-8 and surrogates in sub, iss, aud and elsewhere.
	add("no sub", rs(claimsWith("sub", "")))
	add("empty sub", rs(claimsWith("sub", `""`)))
	add("sub of 256 bytes", rs(claimsWith("sub", `"`+strings.Repeat("a", 256)+`"`)))
	add("sub with a newline", rs(claimsWith("sub", `"a\nb"`)))
	add("sub with NUL", rs(claimsWith("sub", `"a\u0000b"`)))
	add("sub with raw invalid UTF-8", rs(claimsWith("sub", "\"user-\xff\"")))
	add("sub with an overlong encoding", rs(claimsWith("sub", "\"user-\xc0\xaf\"")))
	add("sub with a lone high surrogate", rs(claimsWith("sub", `"user-\ud800"`)))
	add("sub with a lone low surrogate", rs(claimsWith("sub", `"user-\udfff"`)))
	add("sub with a reversed surrogate pair", rs(claimsWith("sub", `"user-\ude00\ud83d"`)))
	add("sub with a high surrogate before a letter", rs(claimsWith("sub", `"user-\ud83dx"`)))
	add("iss with raw invalid UTF-8", rs(claimsWith("iss", fmt.Sprintf("\"%s\xfe\"", iss))))
	add("iss with a lone surrogate", rs(claimsWith("iss", fmt.Sprintf(`"%s\udbff"`, iss))))
	add("aud with raw invalid UTF-8", rs(claimsWith("aud", "[\"research-vessel\",\"\xff\"]")))
	add("aud with a lone surrogate", rs(claimsWith("aud", `["research-vessel","\ud800"]`)))
	add("lone surrogate in a private claim", rs(claimsWith("name", `{"first":"\ud800"}`)))
	add("invalid UTF-8 in the header", signSegments(t, f.rs, jwa.RS256(), "{\"alg\":\"RS256\",\"kid\":\"rsa-1\",\"x\":\"\xff\"}", claimsWith()))
	add("lone surrogate in the header kid", signSegments(t, f.rs, jwa.RS256(), `{"alg":"RS256","kid":"rsa-1\ud800"}`, claimsWith()))
	add("invalid UTF-8 in a claim name", rs(claimsWith()[:len(claimsWith())-1]+",\"\xff\":1}"))

	// Size and shape.
	add("oversized claims", sign(t, f.rs, with(good, "pad", strings.Repeat("A", 20000))))
	add("oversized header", signSegments(t, f.rs, jwa.RS256(), fmt.Sprintf(`{"alg":"RS256","kid":%q,"pad":"%s"}`, f.rs.kid, strings.Repeat("A", 17000)), claimsWith()))
	add("nested too deep", rs(claimsWith("deep", strings.Repeat("[", 70)+strings.Repeat("]", 70))))
	add("empty", "")
	add("one dot", ".")
	add("two dots", "..")
	add("empty header", "."+tampered[1]+"."+tampered[2])
	add("empty payload", tampered[0]+".."+tampered[2])
	add("empty signature", tampered[0]+"."+tampered[1]+".")
	add("two segments", tampered[0]+"."+tampered[1])
	add("four segments", valid+".x")
	add("five segments (JWE shape)", valid+".x.y")
	add("trailing dot", valid+".")
	add("leading dot", "."+valid)
	add("JSON serialization", fmt.Sprintf(`{"payload":%q,"signatures":[{"protected":%q,"signature":%q}]}`, tampered[1], tampered[0], tampered[2]))
	add("header not JSON", seg([]byte("hello"))+"."+tampered[1]+"."+tampered[2])
	add("header an array", seg([]byte(`["alg"]`))+"."+tampered[1]+"."+tampered[2])
	return c
}

func validCorpus(t testing.TB, f *fixture) []corpusToken {
	h := rsHeader(f)
	rs := func(claims string) string { return signSegments(t, f.rs, jwa.RS256(), h, claims) }
	at := func(d time.Duration) string { return fmt.Sprint(t0.Add(d).Unix()) }
	const owner = "astral|user-42"
	return []corpusToken{
		{"RS256", sign(t, f.rs, goodClaims()), owner},
		{"RS512", signWith(t, f.rs, jwa.RS512(), f.rs.kid, goodClaims()), owner},
		{"PS256", signWith(t, f.rs, jwa.PS256(), f.rs.kid, goodClaims()), owner},
		{"PS512", signWith(t, f.rs, jwa.PS512(), f.rs.kid, goodClaims()), owner},
		{"ES256", sign(t, f.ec, goodClaims()), owner},
		{"EdDSA", sign(t, f.ed, goodClaims()), owner},
		{"no kid, one fitting key", signWith(t, f.ed, jwa.EdDSA(), "", goodClaims()), owner},
		{"aud as a string", rs(claimsWith("aud", `"research-vessel"`)), owner},
		{"iss with a trailing slash", rs(claimsWith("iss", fmt.Sprintf("%q", iss+"/"))), owner},
		{"scp as a list", rs(claimsWith("scope", "", "scp", `["tools:files","tools:read"]`)), owner},
		{"exp one second inside skew", rs(claimsWith("exp", at(-29*time.Second))), owner},
		{"exp with a fraction", rs(claimsWith("exp", at(time.Minute)+".5")), owner},
		{"nbf exactly skew ahead", rs(claimsWith("nbf", at(30*time.Second))), owner},
		{"iat exactly skew ahead", rs(claimsWith("iat", at(30*time.Second))), owner},
		{"nbf 0, as older Keycloak sends", rs(claimsWith("nbf", "0")), owner},
		{"SUB and Azp are private claims", rs(claimsWith("SUB", `"bob"`, "Azp", `"x"`)), owner},
		{"same name in different objects", rs(claimsWith("a", `{"sub":1}`, "b", `{"sub":2}`)), owner},
		{"unknown header members", signSegments(t, f.rs, jwa.RS256(), fmt.Sprintf(`{"alg":"RS256","kid":%q,"x5t":"abc","cty":"x"}`, f.rs.kid), claimsWith()), owner},
		{"escaped characters in values", rs(claimsWith("sub", `"user\u002d42"`)), owner},
		{"non-ASCII sub", rs(claimsWith("sub", `"José"`)), "astral|José"},
		{"surrogate pair in sub", rs(claimsWith("sub", `"user-\ud83d\ude00"`)), "astral|user-😀"},
		{"sub of 255 bytes", rs(claimsWith("sub", `"`+strings.Repeat("a", 255)+`"`)), "astral|" + strings.Repeat("a", 255)},
		{"white space in the JSON", rs(" {\n\"iss\" : " + fmt.Sprintf("%q", iss) + ", \"sub\":\"user-42\",\t\"aud\":\"research-vessel\",\"azp\":\"astral-orchestrator\",\"exp\":" + at(time.Minute) + "}\n"), owner},
		{"file issuer", sign(t, f.other, map[string]any{"iss": "https://partner.example.test", "sub": "u", "aud": "vessel", "exp": t0.Add(time.Hour).Unix()}), "partner|u"},
	}
}

// TestAttackCorpus: no token of the attack corpus is accepted, each refusal
// wraps ErrInvalidToken, and every valid token is still accepted with its
// owner.
func TestAttackCorpus(t *testing.T) {
	f := newFixture(t)
	attacks := attackCorpus(t, f)
	if len(attacks) < 60 {
		t.Fatalf("the corpus has %d attack tokens, want at least 60", len(attacks))
	}
	names := map[string]bool{}
	for _, c := range attacks {
		if names[c.name] {
			t.Fatalf("corpus name %q used twice", c.name)
		}
		names[c.name] = true
		t.Run("refused/"+c.name, func(t *testing.T) {
			p, err := f.v.Verify(context.Background(), c.token)
			if err == nil {
				t.Fatalf("accepted: %+v", p)
			}
			if !errors.Is(err, ErrInvalidToken) {
				t.Fatalf("error does not wrap ErrInvalidToken: %v", err)
			}
		})
	}
	for _, c := range validCorpus(t, f) {
		t.Run("accepted/"+c.name, func(t *testing.T) {
			p, err := f.v.Verify(context.Background(), c.token)
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if p.Owner != c.owner {
				t.Fatalf("owner %q, want %q", p.Owner, c.owner)
			}
		})
	}
}
