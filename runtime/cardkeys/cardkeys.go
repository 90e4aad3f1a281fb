// Package cardkeys holds the vessel's card-signing keys: it generates a key
// set (the deployer writes one for each deployment), reads and checks one
// (the deployer before it deploys, the vessel at start), publishes the
// public halves and signs detached payloads. What is signed and how
// (agent cards, push notifications) is vessel/cardsign's; the verifying
// half, which applications need, is vessel/client/cardsig.
package cardkeys

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"
)

// Generate returns a new signing key set holding one ES256 (P-256) private
// key, its kid the RFC 7638 thumbprint, as JSON.
func Generate() ([]byte, error) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("cardsign: generate key: %w", err)
	}
	k, err := jwk.Import(priv)
	if err != nil {
		return nil, fmt.Errorf("cardsign: generate key: %w", err)
	}
	if err := prepare(k); err != nil {
		return nil, err
	}
	set := jwk.NewSet()
	if err := set.AddKey(k); err != nil {
		return nil, fmt.Errorf("cardsign: generate key: %w", err)
	}
	b, err := json.Marshal(set)
	if err != nil {
		return nil, fmt.Errorf("cardsign: encode key: %w", err)
	}
	return b, nil
}

func kidOf(k jwk.Key) string {
	kid, _ := k.KeyID()
	return kid
}

// prepare gives a key its alg (ES256 for P-256, the only kind accepted),
// use "sig" and, when it has none, its thumbprint as kid.
func prepare(k jwk.Key) error {
	ec, ok := k.(jwk.ECDSAPrivateKey)
	if !ok {
		return fmt.Errorf("cardsign: key %q: want an EC P-256 private key", kidOf(k))
	}
	if crv, _ := ec.Crv(); crv != jwa.P256() {
		return fmt.Errorf("cardsign: key %q: want an EC P-256 private key", kidOf(k))
	}
	if a, ok := k.Algorithm(); ok && a.String() != "" && a.String() != jwa.ES256().String() {
		return fmt.Errorf("cardsign: key %q: alg %s, want ES256", kidOf(k), a)
	}
	if kidOf(k) == "" {
		tp, err := k.Thumbprint(crypto.SHA256)
		if err != nil {
			return fmt.Errorf("cardsign: thumbprint: %w", err)
		}
		if err := k.Set(jwk.KeyIDKey, base64.RawURLEncoding.EncodeToString(tp)); err != nil {
			return fmt.Errorf("cardsign: kid: %w", err)
		}
	}
	if err := k.Set(jwk.AlgorithmKey, jwa.ES256()); err != nil {
		return fmt.Errorf("cardsign: alg: %w", err)
	}
	if err := k.Set(jwk.KeyUsageKey, "sig"); err != nil {
		return fmt.Errorf("cardsign: use: %w", err)
	}
	return nil
}

// Keys are the vessel's card-signing keys.
type Keys struct {
	sign jwk.Key
	kid  string
	pub  jwk.Set
}

// ParseKeys reads a JWK set (or a single JWK) of EC P-256 private keys.
// The first key signs; every key's public half is published, so a key
// being rotated out keeps verifying cards cached before the rotation.
func ParseKeys(b []byte) (*Keys, error) {
	set, err := jwk.Parse(b)
	if err != nil {
		return nil, fmt.Errorf("cardsign: read keys: %w", err)
	}
	if set.Len() == 0 {
		return nil, errors.New("cardsign: the key set is empty")
	}
	seen := map[string]bool{}
	for i := range set.Len() {
		k, _ := set.Key(i)
		if err := prepare(k); err != nil {
			return nil, err
		}
		if seen[kidOf(k)] {
			return nil, fmt.Errorf("cardsign: kid %q appears twice", kidOf(k))
		}
		seen[kidOf(k)] = true
	}
	pub, err := jwk.PublicSetOf(set)
	if err != nil {
		return nil, fmt.Errorf("cardsign: public keys: %w", err)
	}
	first, _ := set.Key(0)
	return &Keys{sign: first, kid: kidOf(first), pub: pub}, nil
}

// KeyID is the kid of the signing key.
func (k *Keys) KeyID() string { return k.kid }

// JWKS is the public key set as JSON.
func (k *Keys) JWKS() ([]byte, error) {
	b, err := json.Marshal(k.pub)
	if err != nil {
		return nil, fmt.Errorf("cardsign: encode public keys: %w", err)
	}
	return b, nil
}

// ES256 is the private-key half of a signature (the shape of
// vessel/client/cardsig.SignFunc): the detached compact JWS of payload
// under the protected header h, signed with the signing key.
func (k *Keys) ES256(payload []byte, h jws.Headers) ([]byte, error) {
	compact, err := jws.Sign(nil, jws.WithKey(jwa.ES256(), k.sign, jws.WithProtectedHeaders(h)), jws.WithDetachedPayload(payload))
	if err != nil {
		return nil, fmt.Errorf("cardsign: sign: %w", err)
	}
	return compact, nil
}
