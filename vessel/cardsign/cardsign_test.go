package cardsign

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/astraldeep/astralvessel-go/vessel/client/cardsig"
)

func signedCard(t *testing.T, k *Keys, card string) []byte {
	t.Helper()
	sig, err := k.Sign([]byte(card))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(card), &m); err != nil {
		t.Fatal(err)
	}
	m["signatures"] = []cardsig.Signature{sig}
	b, _ := json.Marshal(m)
	return b
}

func TestSignVerifyTamperRotate(t *testing.T) {
	raw, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	k, err := ParseKeys(raw)
	if err != nil {
		t.Fatal(err)
	}
	jwks, _ := k.JWKS()
	if strings.Contains(string(jwks), `"d"`) {
		t.Fatalf("the public set holds a private key: %s", jwks)
	}
	card := signedCard(t, k, `{"name":"birds","version":"1","description":"Answers questions.","n":1.50}`)
	if kid, err := cardsig.Verify(card, jwks); err != nil || kid != k.KeyID() {
		t.Fatalf("verify: %q %v", kid, err)
	}
	// The protected header carries alg, typ JOSE and kid.
	var doc struct{ Signatures []cardsig.Signature }
	_ = json.Unmarshal(card, &doc)
	hb, _ := base64.RawURLEncoding.DecodeString(doc.Signatures[0].Protected)
	var hdr map[string]any
	_ = json.Unmarshal(hb, &hdr)
	if hdr["alg"] != "ES256" || hdr["typ"] != "JOSE" || hdr["kid"] != k.KeyID() {
		t.Fatalf("protected header %v", hdr)
	}
	// Member order and insignificant whitespace do not matter (JCS).
	var m map[string]any
	_ = json.Unmarshal(card, &m)
	reordered, _ := json.MarshalIndent(m, "", "  ")
	if _, err := cardsig.Verify(reordered, jwks); err != nil {
		t.Fatalf("reformatted card: %v", err)
	}
	tampered := strings.Replace(string(card), "Answers questions.", "Sends me your keys.", 1)
	if _, err := cardsig.Verify([]byte(tampered), jwks); !errors.Is(err, cardsig.ErrBadSignature) {
		t.Fatalf("tampered card: %v", err)
	}
	if _, err := cardsig.Verify([]byte(`{"name":"birds"}`), jwks); !errors.Is(err, cardsig.ErrUnsigned) {
		t.Fatalf("unsigned card: %v", err)
	}
	// Another key set does not verify it.
	other, _ := Generate()
	ok, _ := ParseKeys(other)
	otherJWKS, _ := ok.JWKS()
	if _, err := cardsig.Verify(card, otherJWKS); !errors.Is(err, cardsig.ErrBadSignature) {
		t.Fatalf("foreign keys: %v", err)
	}
	// Rotation: a new key first, the old one kept: new cards are signed by
	// the new key, cards signed by the old one still verify.
	var newSet, oldSet struct{ Keys []json.RawMessage }
	_ = json.Unmarshal(other, &newSet)
	_ = json.Unmarshal(raw, &oldSet)
	both, _ := json.Marshal(map[string]any{"keys": append(newSet.Keys, oldSet.Keys...)})
	rk, err := ParseKeys(both)
	if err != nil {
		t.Fatal(err)
	}
	rj, _ := rk.JWKS()
	if rk.KeyID() != ok.KeyID() {
		t.Fatalf("signing kid %s, want the new key %s", rk.KeyID(), ok.KeyID())
	}
	if kid, err := cardsig.Verify(card, rj); err != nil || kid != k.KeyID() {
		t.Fatalf("old card after rotation: %q %v", kid, err)
	}
	if kid, err := cardsig.Verify(signedCard(t, rk, `{"name":"birds"}`), rj); err != nil || kid != ok.KeyID() {
		t.Fatalf("new card after rotation: %q %v", kid, err)
	}
}

func TestParseKeysRefuses(t *testing.T) {
	for _, bad := range []string{``, `{"keys":[]}`, `{"kty":"oct","k":"c2VjcmV0"}`, `not json`} {
		if _, err := ParseKeys([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	raw, _ := Generate()
	var s struct{ Keys []json.RawMessage }
	_ = json.Unmarshal(raw, &s)
	dup, _ := json.Marshal(map[string]any{"keys": []json.RawMessage{s.Keys[0], s.Keys[0]}})
	if _, err := ParseKeys(dup); err == nil {
		t.Error("a kid twice accepted")
	}
	// A public key cannot sign.
	k, _ := ParseKeys(raw)
	pub, _ := k.JWKS()
	if _, err := ParseKeys(pub); err == nil {
		t.Error("a public key accepted as a signing key")
	}
}
