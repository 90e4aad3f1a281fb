// Package cardsign is the signing half of agent-card and push signatures
// (the verifying half, which applications need, is vessel/client/cardsig):
// it signs cards and push notifications with the vessel's keys
// (runtime/cardkeys, which also generates and checks them for the
// deployer). It lives on the server side so that no private-key code ships
// in the public client.
package cardsign

import (
	"errors"

	"github.com/astraldeep/astralvessel-go/runtime/cardkeys"
	"github.com/astraldeep/astralvessel-go/vessel/client/cardsig"
)

// Keys are the vessel's card-signing keys.
type Keys struct{ *cardkeys.Keys }

// Generate returns a new signing key set (cardkeys.Generate).
func Generate() ([]byte, error) { return cardkeys.Generate() }

// ParseKeys reads a JWK set (or a single JWK) of EC P-256 private keys
// (cardkeys.ParseKeys): the first key signs, every key's public half is
// published.
func ParseKeys(b []byte) (*Keys, error) {
	k, err := cardkeys.ParseKeys(b)
	if err != nil {
		return nil, err
	}
	return &Keys{k}, nil
}

// Sign signs a card's JSON (any "signatures" in it are ignored) and
// returns the signature to put in its "signatures".
func (k *Keys) Sign(card []byte) (cardsig.Signature, error) {
	return cardsig.AssembleCard(card, k.KeyID(), k.ES256)
}

// SignPush signs a push notification body (the exact bytes sent) for one
// attempt and returns the detached compact JWS "protected..signature"
// that cardsig.VerifyPush checks.
func (k *Keys) SignPush(body []byte, c cardsig.PushClaims) (string, error) {
	if c.Audience == "" || c.TaskID == "" || c.DeliveryID == "" || c.IssuedAt.IsZero() {
		return "", errors.New("cardsign: a push signature needs its audience, task, delivery id and time")
	}
	return cardsig.AssemblePush(body, k.KeyID(), c, k.ES256)
}
