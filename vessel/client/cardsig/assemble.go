package cardsig

import (
	"fmt"

	"github.com/lestrrat-go/jwx/v3/jws"
)

// A SignFunc makes the detached compact JWS ("protected..signature") of
// payload under the protected header h, adding alg: the private-key half
// of a signature, which this module does not carry. The vessel's is
// vessel/cardsign's (runtime/cardkeys.Keys.ES256); this module's tests have one of their own keys.
type SignFunc func(payload []byte, h jws.Headers) ([]byte, error)

// AssembleCard is the one assembly of a card signature, for a signer
// whose key has kid: what is signed (Canonical) and the protected header
// Verify expects, sign making the signature itself.
func AssembleCard(card []byte, kid string, sign SignFunc) (Signature, error) {
	payload, err := Canonical(card)
	if err != nil {
		return Signature{}, err
	}
	compact, err := assemble(payload, map[string]any{jws.TypeKey: "JOSE", jws.KeyIDKey: kid}, sign)
	if err != nil {
		return Signature{}, err
	}
	return FromCompact(compact)
}

// AssemblePush is the one assembly of a push signature, for a signer whose
// key has kid: the body as sent, under the protected header VerifyPush
// expects (typ PushType, kid, and c's claims), sign making the signature
// itself. It does not check c: a signer that must not sign an incomplete
// claim set (the vessel's) checks it first.
func AssemblePush(body []byte, kid string, c PushClaims, sign SignFunc) (string, error) {
	compact, err := assemble(body, map[string]any{jws.TypeKey: PushType, jws.KeyIDKey: kid,
		"aud": c.Audience, "iat": c.IssuedAt.Unix(), DeliveryHeader: c.DeliveryID, TaskHeader: c.TaskID}, sign)
	if err != nil {
		return "", err
	}
	if _, err := FromCompact(compact); err != nil {
		return "", err
	}
	return string(compact), nil
}

func assemble(payload []byte, members map[string]any, sign SignFunc) ([]byte, error) {
	h := jws.NewHeaders()
	for name, v := range members {
		if err := h.Set(name, v); err != nil {
			return nil, fmt.Errorf("cardsig: header %s: %w", name, err)
		}
	}
	return sign(payload, h)
}
