// Package cardsig signs and verifies A2A agent cards (A2A 1.0 §8): each
// signature is a JWS with a detached payload, the RFC 8785 (JCS)
// canonical form of the card without its "signatures" member, and a
// protected header carrying alg, typ "JOSE" and kid. The vessel holds the
// private keys (a JWK set: the first key signs, all are published) and
// serves the public ones as a JWK set at JWKSPath.
package cardsig

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gowebpki/jcs"
	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jws"
)

// JWKSPath is where the vessel serves its card-signing public keys.
const JWKSPath = "/.well-known/jwks.json"

// JWKSMediaType is the media type of a JWK set (RFC 7517 §8.5).
const JWKSMediaType = "application/jwk-set+json"

// Errors a verification returns (wrapped).
var (
	ErrUnsigned     = errors.New("cardsig: the card carries no signature")
	ErrBadSignature = errors.New("cardsig: no signature of the card verifies against the published keys")
)

// Signature is one entry of a card's "signatures".
type Signature struct {
	Protected string         `json:"protected"`
	Signature string         `json:"signature"`
	Header    map[string]any `json:"header,omitempty"`
}

// Generate returns a new signing key set holding one ES256 (P-256) private
// key, its kid the RFC 7638 thumbprint, as JSON.
func Generate() ([]byte, error) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("cardsig: generate key: %w", err)
	}
	k, err := jwk.FromRaw(priv)
	if err != nil {
		return nil, fmt.Errorf("cardsig: generate key: %w", err)
	}
	if err := prepare(k); err != nil {
		return nil, err
	}
	set := jwk.NewSet()
	if err := set.AddKey(k); err != nil {
		return nil, fmt.Errorf("cardsig: generate key: %w", err)
	}
	b, err := json.Marshal(set)
	if err != nil {
		return nil, fmt.Errorf("cardsig: encode key: %w", err)
	}
	return b, nil
}

// prepare gives a key its alg (ES256 for P-256, the only kind accepted),
// use "sig" and, when it has none, its thumbprint as kid.
func prepare(k jwk.Key) error {
	ec, ok := k.(jwk.ECDSAPrivateKey)
	if !ok || ec.Crv() != jwa.P256 {
		return fmt.Errorf("cardsig: key %q: want an EC P-256 private key", k.KeyID())
	}
	if a := k.Algorithm(); a.String() != "" && a != jwa.ES256 {
		return fmt.Errorf("cardsig: key %q: alg %s, want ES256", k.KeyID(), a)
	}
	if k.KeyID() == "" {
		tp, err := k.Thumbprint(crypto.SHA256)
		if err != nil {
			return fmt.Errorf("cardsig: thumbprint: %w", err)
		}
		if err := k.Set(jwk.KeyIDKey, base64.RawURLEncoding.EncodeToString(tp)); err != nil {
			return fmt.Errorf("cardsig: kid: %w", err)
		}
	}
	if err := k.Set(jwk.AlgorithmKey, jwa.ES256); err != nil {
		return fmt.Errorf("cardsig: alg: %w", err)
	}
	if err := k.Set(jwk.KeyUsageKey, "sig"); err != nil {
		return fmt.Errorf("cardsig: use: %w", err)
	}
	return nil
}

// Keys are the vessel's card-signing keys.
type Keys struct {
	sign jwk.Key
	pub  jwk.Set
}

// ParseKeys reads a JWK set (or a single JWK) of EC P-256 private keys.
// The first key signs; every key's public half is published, so a key
// being rotated out keeps verifying cards cached before the rotation.
func ParseKeys(b []byte) (*Keys, error) {
	set, err := jwk.Parse(b)
	if err != nil {
		return nil, fmt.Errorf("cardsig: read keys: %w", err)
	}
	if set.Len() == 0 {
		return nil, errors.New("cardsig: the key set is empty")
	}
	seen := map[string]bool{}
	for i := range set.Len() {
		k, _ := set.Key(i)
		if err := prepare(k); err != nil {
			return nil, err
		}
		if seen[k.KeyID()] {
			return nil, fmt.Errorf("cardsig: kid %q appears twice", k.KeyID())
		}
		seen[k.KeyID()] = true
	}
	pub, err := jwk.PublicSetOf(set)
	if err != nil {
		return nil, fmt.Errorf("cardsig: public keys: %w", err)
	}
	first, _ := set.Key(0)
	return &Keys{sign: first, pub: pub}, nil
}

// KeyID is the kid of the signing key.
func (k *Keys) KeyID() string { return k.sign.KeyID() }

// JWKS is the public key set as JSON.
func (k *Keys) JWKS() ([]byte, error) {
	b, err := json.Marshal(k.pub)
	if err != nil {
		return nil, fmt.Errorf("cardsig: encode public keys: %w", err)
	}
	return b, nil
}

// Canonical is the signed form of a card: its JSON without "signatures",
// canonicalized per RFC 8785.
func Canonical(card []byte) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(card, &m); err != nil {
		return nil, fmt.Errorf("cardsig: the card is not a JSON object: %w", err)
	}
	delete(m, "signatures")
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("cardsig: encode card: %w", err)
	}
	out, err := jcs.Transform(b)
	if err != nil {
		return nil, fmt.Errorf("cardsig: canonicalize card: %w", err)
	}
	return out, nil
}

// Sign signs a card's JSON (any "signatures" in it are ignored) and
// returns the signature to put in its "signatures".
func (k *Keys) Sign(card []byte) (Signature, error) {
	payload, err := Canonical(card)
	if err != nil {
		return Signature{}, err
	}
	h := jws.NewHeaders()
	for name, v := range map[string]any{jws.TypeKey: "JOSE", jws.KeyIDKey: k.sign.KeyID()} {
		if err := h.Set(name, v); err != nil {
			return Signature{}, fmt.Errorf("cardsig: header %s: %w", name, err)
		}
	}
	compact, err := jws.Sign(nil, jws.WithKey(jwa.ES256, k.sign, jws.WithProtectedHeaders(h)), jws.WithDetachedPayload(payload))
	if err != nil {
		return Signature{}, fmt.Errorf("cardsig: sign: %w", err)
	}
	return splitCompact(compact)
}

func splitCompact(compact []byte) (Signature, error) {
	var parts [3]string
	n := 0
	start := 0
	for i, c := range compact {
		if c == '.' {
			if n == 2 {
				return Signature{}, errors.New("cardsig: malformed JWS")
			}
			parts[n] = string(compact[start:i])
			n++
			start = i + 1
		}
	}
	if n != 2 || parts[1] != "" {
		return Signature{}, errors.New("cardsig: the JWS payload is not detached")
	}
	return Signature{Protected: parts[0], Signature: string(compact[start:])}, nil
}

// Verify checks that at least one of the card's signatures verifies
// against the public key set jwks: its protected header names alg, typ
// "JOSE" and a kid found in jwks, and it signs the card's canonical form.
// It returns the kid that verified.
func Verify(card, jwks []byte) (string, error) {
	var doc struct {
		Signatures []Signature `json:"signatures"`
	}
	if err := json.Unmarshal(card, &doc); err != nil {
		return "", fmt.Errorf("cardsig: read card: %w", err)
	}
	if len(doc.Signatures) == 0 {
		return "", ErrUnsigned
	}
	set, err := jwk.Parse(jwks)
	if err != nil {
		return "", fmt.Errorf("cardsig: read the key set: %w", err)
	}
	payload, err := Canonical(card)
	if err != nil {
		return "", err
	}
	var why []error
	for i, s := range doc.Signatures {
		hb, err := base64.RawURLEncoding.DecodeString(s.Protected)
		if err != nil {
			why = append(why, fmt.Errorf("signature %d: protected header is not base64url", i))
			continue
		}
		var hdr struct {
			Alg string `json:"alg"`
			Typ string `json:"typ"`
			Kid string `json:"kid"`
		}
		if err := json.Unmarshal(hb, &hdr); err != nil || hdr.Alg == "" || hdr.Kid == "" || hdr.Typ != "JOSE" {
			why = append(why, fmt.Errorf("signature %d: the protected header must carry alg, kid and typ JOSE", i))
			continue
		}
		compact := []byte(s.Protected + ".." + s.Signature)
		if _, err := jws.Verify(compact, jws.WithKeySet(set, jws.WithRequireKid(true)), jws.WithDetachedPayload(payload)); err != nil {
			why = append(why, fmt.Errorf("signature %d (kid %s): %w", i, hdr.Kid, err))
			continue
		}
		return hdr.Kid, nil
	}
	return "", fmt.Errorf("%w: %w", ErrBadSignature, errors.Join(why...))
}
