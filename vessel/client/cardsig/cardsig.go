// Package cardsig verifies A2A agent cards (A2A 1.0 §8) and the vessel's
// push notification signatures: each card signature is a JWS with a
// detached payload, the RFC 8785 (JCS) canonical form of the card without
// its "signatures" member, and a protected header carrying alg, typ "JOSE"
// and kid. The vessel holds the private keys and signs (its server side,
// vessel/cardsign; no private-key code is in this public module); it
// serves the public keys as a JWK set at JWKSPath. What a signature signs
// and carries is assembled here once (AssembleCard, AssemblePush) for
// every signer, which passes the signing itself (SignFunc).
package cardsig

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gowebpki/jcs"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"
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

// Canonical is the signed form of a card: its JSON without "signatures",
// canonicalized per RFC 8785.
// A card whose JSON names a member twice at any depth is refused: JSON
// readers differ on which one wins, so the card a verifier checked could
// differ from the card an application acts on.
func Canonical(card []byte) ([]byte, error) {
	if err := noDuplicates(card); err != nil {
		return nil, err
	}
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

// FromCompact splits a detached compact JWS ("protected..signature") into
// a card's Signature entry.
func FromCompact(compact []byte) (Signature, error) { return splitCompact(compact) }

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
// against the public key set jwks (a JWK set's JSON); see VerifySet.
func Verify(card, jwks []byte) (string, error) {
	set, err := jwk.Parse(jwks)
	if err != nil {
		return "", fmt.Errorf("cardsig: read the key set: %w", err)
	}
	return VerifySet(card, set)
}

// VerifySet checks that at least one of the card's signatures verifies
// against set: its protected header names alg, typ "JOSE" and a kid found
// in set, and it signs the card's canonical form. It returns the kid that
// verified.
func VerifySet(card []byte, set jwk.Set) (string, error) {
	payload, err := Canonical(card)
	if err != nil {
		return "", err
	}
	var doc struct {
		Signatures []Signature `json:"signatures"`
	}
	if err := json.Unmarshal(card, &doc); err != nil {
		return "", fmt.Errorf("cardsig: read card: %w", err)
	}
	if len(doc.Signatures) == 0 {
		return "", ErrUnsigned
	}
	if set == nil || set.Len() == 0 {
		return "", fmt.Errorf("%w: the key set is empty", ErrBadSignature)
	}
	var why []error
	for i, s := range doc.Signatures {
		kid, err := verifyOne(s, set, payload)
		if err != nil {
			why = append(why, fmt.Errorf("signature %d: %w", i, err))
			continue
		}
		return kid, nil
	}
	return "", fmt.Errorf("%w: %w", ErrBadSignature, errors.Join(why...))
}

func verifyOne(s Signature, set jwk.Set, payload []byte) (string, error) {
	hb, err := base64.RawURLEncoding.DecodeString(s.Protected)
	if err != nil {
		return "", errors.New("protected header is not base64url")
	}
	var hdr struct {
		Alg string `json:"alg"`
		Typ string `json:"typ"`
		Kid string `json:"kid"`
	}
	if err := noDuplicates(hb); err != nil {
		return "", err
	}
	if err := json.Unmarshal(hb, &hdr); err != nil || hdr.Alg == "" || hdr.Kid == "" || hdr.Typ != "JOSE" {
		return "", errors.New("the protected header must carry alg, kid and typ JOSE")
	}
	compact := []byte(s.Protected + ".." + s.Signature)
	if _, err := jws.Verify(compact, jws.WithKeySet(set, jws.WithRequireKid(true)), jws.WithDetachedPayload(payload)); err != nil {
		return "", fmt.Errorf("kid %s: %w", hdr.Kid, err)
	}
	return hdr.Kid, nil
}
