// Package testsign holds a private key for this module's tests only. The
// vessel's signer is vessel/cardsign, on the server side; this public
// module must not import it (nor ship private-key code to applications).
// What a signature signs and carries is assembled once, by
// cardsig.AssembleCard and AssemblePush, for both: each keeps only its
// key and the one jwx call that signs with it (cardsig.SignFunc).
package testsign

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"

	"github.com/astraldeep/astralvessel-go/vessel/client/cardsig"
)

// Keys is one ES256 key with kid.
type Keys struct {
	priv jwk.Key
	pub  jwk.Key
	kid  string
}

// New makes a key whose kid is kid; t fails when it cannot.
func New(t testing.TB, kid string) *Keys {
	t.Helper()
	k, err := newKeys(kid)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func newKeys(kid string) (*Keys, error) {
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("testsign: %w", err)
	}
	priv, err := jwk.Import(ec)
	if err != nil {
		return nil, fmt.Errorf("testsign: %w", err)
	}
	for name, v := range map[string]any{jwk.KeyIDKey: kid, jwk.AlgorithmKey: jwa.ES256(), jwk.KeyUsageKey: "sig"} {
		if err := priv.Set(name, v); err != nil {
			return nil, fmt.Errorf("testsign: %w", err)
		}
	}
	pub, err := priv.PublicKey()
	if err != nil {
		return nil, fmt.Errorf("testsign: %w", err)
	}
	return &Keys{priv: priv, pub: pub, kid: kid}, nil
}

// KeyID is the key's kid.
func (k *Keys) KeyID() string { return k.kid }

// Public is the public key.
func (k *Keys) Public() jwk.Key { return k.pub }

// JWKS is a JWK set of the public halves of keys.
func JWKS(keys ...*Keys) []byte {
	set := jwk.NewSet()
	for _, k := range keys {
		_ = set.AddKey(k.pub)
	}
	b, _ := json.Marshal(set)
	return b
}

// PrivateJWKS is a JWK set holding the private key.
func (k *Keys) PrivateJWKS() []byte {
	set := jwk.NewSet()
	_ = set.AddKey(k.priv)
	b, _ := json.Marshal(set)
	return b
}

// es256 signs with the private key (cardsig.SignFunc).
func (k *Keys) es256(payload []byte, h jws.Headers) ([]byte, error) {
	b, err := jws.Sign(nil, jws.WithKey(jwa.ES256(), k.priv, jws.WithProtectedHeaders(h)), jws.WithDetachedPayload(payload))
	if err != nil {
		return nil, fmt.Errorf("testsign: %w", err)
	}
	return b, nil
}

// Sign signs a card's canonical form.
func (k *Keys) Sign(card []byte) (cardsig.Signature, error) {
	return cardsig.AssembleCard(card, k.kid, k.es256)
}

// SignedCard is card (a JSON object) with its signature added.
func (k *Keys) SignedCard(card []byte) ([]byte, error) {
	sig, err := k.Sign(card)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(card, &m); err != nil {
		return nil, fmt.Errorf("testsign: %w", err)
	}
	m["signatures"] = []cardsig.Signature{sig}
	return json.Marshal(m)
}

// SignPush signs a push body with the claims in the protected header.
func (k *Keys) SignPush(body []byte, c cardsig.PushClaims) (string, error) {
	return cardsig.AssemblePush(body, k.kid, c, k.es256)
}
