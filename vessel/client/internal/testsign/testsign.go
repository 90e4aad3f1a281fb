// Package testsign signs cards and push notifications for this module's
// tests only. The vessel's signer is deployer/cardsign, on the server
// side; this public module must not import it (nor ship private-key code
// to applications), so its tests sign with jwx directly, the way any other
// JOSE signer would, which also checks that verification does not depend
// on the vessel's own signing code.
package testsign

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"fmt"

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

// New makes a key whose kid is kid.
func New(kid string) (*Keys, error) {
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

func (k *Keys) detached(payload []byte, members map[string]any) ([]byte, error) {
	h := jws.NewHeaders()
	for name, v := range members {
		if err := h.Set(name, v); err != nil {
			return nil, fmt.Errorf("testsign: %w", err)
		}
	}
	b, err := jws.Sign(nil, jws.WithKey(jwa.ES256(), k.priv, jws.WithProtectedHeaders(h)), jws.WithDetachedPayload(payload))
	if err != nil {
		return nil, fmt.Errorf("testsign: %w", err)
	}
	return b, nil
}

// Sign signs a card's canonical form.
func (k *Keys) Sign(card []byte) (cardsig.Signature, error) {
	payload, err := cardsig.Canonical(card)
	if err != nil {
		return cardsig.Signature{}, err
	}
	compact, err := k.detached(payload, map[string]any{jws.TypeKey: "JOSE", jws.KeyIDKey: k.kid})
	if err != nil {
		return cardsig.Signature{}, err
	}
	return cardsig.FromCompact(compact)
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
	b, err := k.detached(body, map[string]any{jws.TypeKey: cardsig.PushType, jws.KeyIDKey: k.kid,
		"aud": c.Audience, "iat": c.IssuedAt.Unix(), cardsig.DeliveryHeader: c.DeliveryID, cardsig.TaskHeader: c.TaskID})
	return string(b), err
}
