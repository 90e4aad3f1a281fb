package cardsig

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jws"
)

// PushType is the typ of a push notification's signature.
const PushType = "a2a-push+jws"

// DeliveryHeader is the protected header parameter that binds a push
// signature to its delivery id.
const DeliveryHeader = "vessel_delivery"

// SignPush signs a push notification body (the exact bytes sent) for the
// delivery id and returns the detached compact JWS "protected..signature".
func (k *Keys) SignPush(body []byte, deliveryID string) (string, error) {
	h := jws.NewHeaders()
	for name, v := range map[string]any{jws.TypeKey: PushType, jws.KeyIDKey: k.sign.KeyID(), DeliveryHeader: deliveryID} {
		if err := h.Set(name, v); err != nil {
			return "", fmt.Errorf("cardsig: header %s: %w", name, err)
		}
	}
	compact, err := jws.Sign(nil, jws.WithKey(jwa.ES256, k.sign, jws.WithProtectedHeaders(h)), jws.WithDetachedPayload(body))
	if err != nil {
		return "", fmt.Errorf("cardsig: sign push: %w", err)
	}
	if _, err := splitCompact(compact); err != nil {
		return "", err
	}
	return string(compact), nil
}

// VerifyPush checks a push signature (SignPush) over body against the key
// set jwks: its typ is PushType, its kid is in jwks and its delivery id is
// deliveryID. It returns the kid that verified.
func VerifyPush(signature string, body []byte, deliveryID string, jwks []byte) (string, error) {
	sig, err := splitCompact([]byte(signature))
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrBadSignature, err)
	}
	hb, err := base64.RawURLEncoding.DecodeString(sig.Protected)
	if err != nil {
		return "", fmt.Errorf("%w: protected header is not base64url", ErrBadSignature)
	}
	var hdr map[string]any
	if err := json.Unmarshal(hb, &hdr); err != nil {
		return "", fmt.Errorf("%w: protected header is not JSON", ErrBadSignature)
	}
	kid, _ := hdr["kid"].(string)
	if typ, _ := hdr["typ"].(string); typ != PushType || kid == "" {
		return "", fmt.Errorf("%w: the protected header must carry kid and typ %s", ErrBadSignature, PushType)
	}
	if d, _ := hdr[DeliveryHeader].(string); d != deliveryID {
		return "", fmt.Errorf("%w: signed for delivery %q, received as %q", ErrBadSignature, d, deliveryID)
	}
	set, err := jwk.Parse(jwks)
	if err != nil {
		return "", fmt.Errorf("cardsig: read the key set: %w", err)
	}
	if set.Len() == 0 {
		return "", errors.New("cardsig: the key set is empty")
	}
	if _, err := jws.Verify([]byte(signature), jws.WithKeySet(set, jws.WithRequireKid(true)), jws.WithDetachedPayload(body)); err != nil {
		return "", fmt.Errorf("%w: kid %s: %w", ErrBadSignature, kid, err)
	}
	return kid, nil
}
