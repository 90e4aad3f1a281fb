package cardsig_test

import (
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwk"

	"github.com/astraldeep/astralvessel-go/vessel/client/cardsig"
	"github.com/astraldeep/astralvessel-go/vessel/client/internal/testsign"
)

// TestVerifyCard: a card signed by the module's assembly (testsign's key;
// TestVerifyIndependentSigner for a signer without it) verifies against the
// key set holding its key, in any member order; changed, unsigned or
// signed by a key outside the set, it is refused.
func TestVerifyCard(t *testing.T) {
	k, other := testsign.New(t, "a"), testsign.New(t, "b")
	card, err := k.SignedCard([]byte(`{"name":"birds","version":"1","description":"Answers questions.","n":1.50}`))
	if err != nil {
		t.Fatal(err)
	}
	if kid, err := cardsig.Verify(card, testsign.JWKS(k)); err != nil || kid != "a" {
		t.Fatalf("verify: %q %v", kid, err)
	}
	if kid, err := cardsig.Verify(card, testsign.JWKS(other, k)); err != nil || kid != "a" {
		t.Fatalf("verify against a rotated set: %q %v", kid, err)
	}
	var m map[string]any
	_ = json.Unmarshal(card, &m)
	reordered, _ := json.MarshalIndent(m, "", "  ")
	if _, err := cardsig.Verify(reordered, testsign.JWKS(k)); err != nil {
		t.Fatalf("reformatted card: %v", err)
	}
	tampered := strings.Replace(string(card), "Answers questions.", "Sends me your keys.", 1)
	if _, err := cardsig.Verify([]byte(tampered), testsign.JWKS(k)); !errors.Is(err, cardsig.ErrBadSignature) {
		t.Fatalf("tampered card: %v", err)
	}
	if _, err := cardsig.Verify([]byte(`{"name":"birds"}`), testsign.JWKS(k)); !errors.Is(err, cardsig.ErrUnsigned) {
		t.Fatalf("unsigned card: %v", err)
	}
	if _, err := cardsig.Verify(card, testsign.JWKS(other)); !errors.Is(err, cardsig.ErrBadSignature) {
		t.Fatalf("foreign keys: %v", err)
	}
}

// TestDuplicateMembersRefused: a signed card with a member named twice
// (so Go reads the last, other readers the first) is refused, at the top,
// nested, and in the signature's protected header; the signed card
// without the duplicate still verifies.
func TestDuplicateMembersRefused(t *testing.T) {
	k := testsign.New(t, "a")
	card, err := k.SignedCard([]byte(`{"name":"field-guide-reader","skills":[{"id":"x"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	// The canonical form signed keeps "name" once; a reader taking the
	// first member would see "gated".
	dupTop := strings.Replace(string(card), `"name":"field-guide-reader"`, `"name":"gated","name":"field-guide-reader"`, 1)
	dupNested := strings.Replace(string(card), `{"id":"x"}`, `{"id":"y","id":"x"}`, 1)
	for name, doc := range map[string]string{"top": dupTop, "nested": dupNested} {
		if _, err := cardsig.Verify([]byte(doc), testsign.JWKS(k)); !errors.Is(err, cardsig.ErrDuplicateMember) {
			t.Errorf("%s: %v", name, err)
		}
		if _, err := cardsig.Canonical([]byte(doc)); !errors.Is(err, cardsig.ErrDuplicateMember) {
			t.Errorf("%s: canonical form made: %v", name, err)
		}
	}
	if _, err := cardsig.Verify(card, testsign.JWKS(k)); err != nil {
		t.Fatalf("the card itself: %v", err)
	}
	if _, err := cardsig.Verify([]byte(`{"name":"a"} {}`), testsign.JWKS(k)); err == nil {
		t.Fatal("trailing data accepted")
	}
}

// TestVerifyPush: a push signature made by the module's assembly
// (testsign's key; TestVerifyIndependentSigner for a signer without it)
// verifies over the exact body against a set holding its key, and names
// its claims.
func TestVerifyPush(t *testing.T) {
	k := testsign.New(t, "p")
	set, err := jwk.Parse(testsign.JWKS(k))
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"statusUpdate":{"taskId":"t1"}}`)
	c := cardsig.PushClaims{Audience: "https://app.internal:8443/hooks/a", TaskID: "t1", DeliveryID: "d1", IssuedAt: time.Unix(1_800_000_000, 0)}
	sig, err := k.SignPush(body, c)
	if err != nil {
		t.Fatal(err)
	}
	h, err := cardsig.VerifyPush(sig, body, set)
	if err != nil || h.PushClaims != c || h.KeyID != "p" {
		t.Fatalf("verify: %+v %v", h, err)
	}
	if _, err := cardsig.VerifyPush(sig, append(body, ' '), set); !errors.Is(err, cardsig.ErrBadPush) {
		t.Fatalf("changed body: %v", err)
	}
	oset, _ := jwk.Parse(testsign.JWKS(testsign.New(t, "q")))
	if _, err := cardsig.VerifyPush(sig, body, oset); !errors.Is(err, cardsig.ErrUnknownKey) {
		t.Fatalf("another set: %v", err)
	}
}

// TestVerifyIndependentSigner: signatures made without the module's
// assembly (AssembleCard, AssemblePush) or jwx's signer verify: the
// protected header written by hand, its members in another order than
// jwx writes them and with a member no verifier reads, the card's
// canonical form (RFC 8785) written out, and the ES256 signature made
// with crypto/ecdsa over the JWS signing input (RFC 7515 §5.1).
func TestVerifyIndependentSigner(t *testing.T) {
	k := testsign.New(t, "ind")
	priv := ecdsaKey(t, k)
	pub, err := jwk.Parse(testsign.JWKS(k))
	if err != nil {
		t.Fatal(err)
	}
	canonical := `{"description":"Answers questions.","name":"birds","version":"1"}`
	protected, sig := jwsSign(t, priv, `{"kid":"ind","x-signer":"by hand","typ":"JOSE","alg":"ES256"}`, canonical)
	card := `{
  "version": "1",
  "name": "birds",
  "description": "Answers questions.",
  "signatures": [{"protected": "` + protected + `", "signature": "` + sig + `"}]
}`
	if kid, err := cardsig.VerifySet([]byte(card), pub); err != nil || kid != "ind" {
		t.Fatalf("card signed by hand: %q %v", kid, err)
	}
	changed := strings.Replace(card, `"1"`, `"2"`, 1)
	if _, err := cardsig.VerifySet([]byte(changed), pub); !errors.Is(err, cardsig.ErrBadSignature) {
		t.Fatalf("changed card signed by hand: %v", err)
	}

	body := `{"statusUpdate":{"taskId":"t1"}}`
	protected, sig = jwsSign(t, priv, `{"vessel_task":"t1","iat":1800000000,"aud":"https://app.internal:8443/hooks/a",`+
		`"alg":"ES256","x-signer":"by hand","vessel_delivery":"d1","kid":"ind","typ":"a2a-push+jws"}`, body)
	want := cardsig.PushClaims{Audience: "https://app.internal:8443/hooks/a", TaskID: "t1", DeliveryID: "d1", IssuedAt: time.Unix(1_800_000_000, 0)}
	h, err := cardsig.VerifyPush(protected+".."+sig, []byte(body), pub)
	if err != nil || h.PushClaims != want || h.KeyID != "ind" {
		t.Fatalf("push signed by hand: %+v %v", h, err)
	}
	if _, err := cardsig.VerifyPush(protected+".."+sig, []byte(body+" "), pub); !errors.Is(err, cardsig.ErrBadPush) {
		t.Fatalf("changed push body signed by hand: %v", err)
	}
}

// ecdsaKey is k's private key as crypto/ecdsa holds it.
func ecdsaKey(t *testing.T, k *testsign.Keys) *ecdsa.PrivateKey {
	t.Helper()
	set, err := jwk.Parse(k.PrivateJWKS())
	if err != nil {
		t.Fatal(err)
	}
	key, _ := set.Key(0)
	var priv ecdsa.PrivateKey
	if err := jwk.Export(key, &priv); err != nil {
		t.Fatal(err)
	}
	return &priv
}

// jwsSign is a detached ES256 JWS of payload under the protected header
// given as JSON: its protected part and its signature (R and S, 32 bytes
// each), base64url.
func jwsSign(t *testing.T, priv *ecdsa.PrivateKey, header, payload string) (string, string) {
	t.Helper()
	enc := base64.RawURLEncoding
	protected := enc.EncodeToString([]byte(header))
	digest := sha256.Sum256([]byte(protected + "." + enc.EncodeToString([]byte(payload))))
	r, s, err := ecdsa.Sign(rand.Reader, priv, digest[:])
	if err != nil {
		t.Fatal(err)
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return protected, enc.EncodeToString(sig)
}
