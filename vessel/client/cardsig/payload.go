package cardsig

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"
)

// PushType is the typ of a push notification's signature.
const PushType = "a2a-push+jws"

// Protected header parameters of a push signature besides alg, typ and
// kid: "aud" (the webhook URL posted to) and "iat" (seconds since the
// epoch) with their JWT meanings (RFC 7519 §4.1.3, §4.1.6; §5.3 allows
// them in a header), and these two.
const (
	// DeliveryHeader binds a push signature to its delivery id.
	DeliveryHeader = "vessel_delivery"
	// TaskHeader binds it to the task the event is about.
	TaskHeader = "vessel_task"
)

// ErrUnknownKey is returned (wrapped) when a signature's kid is not in
// the key set: the set may be older than a rotation.
var ErrUnknownKey = errors.New("cardsig: the signing key is not in the key set")

// ErrBadPush is returned (wrapped) when a push signature is malformed or
// does not verify.
var ErrBadPush = errors.New("cardsig: the push signature does not verify")

// PushClaims is what a push signature binds besides the body.
type PushClaims struct {
	// Audience is the webhook URL the delivery is posted to ("aud").
	Audience string
	// TaskID is the task the event is about (TaskHeader).
	TaskID string
	// DeliveryID is the delivery id (DeliveryHeader), the same on every
	// attempt.
	DeliveryID string
	// IssuedAt is when this attempt was signed ("iat", whole seconds).
	IssuedAt time.Time
}

// PushHeader is the protected header of a push signature, read without
// verifying it (ReadPush).
type PushHeader struct {
	KeyID string
	PushClaims
}

// ReadPush decodes a push signature's protected header, checking that it
// carries typ PushType, alg ES256, kid and every claim with its type, each
// once. It does not verify anything: VerifyPush does.
func ReadPush(signature string) (PushHeader, error) {
	sig, err := splitCompact([]byte(signature))
	if err != nil {
		return PushHeader{}, fmt.Errorf("%w: %w", ErrBadPush, err)
	}
	hb, err := base64.RawURLEncoding.DecodeString(sig.Protected)
	if err != nil {
		return PushHeader{}, fmt.Errorf("%w: protected header is not base64url", ErrBadPush)
	}
	if err := noDuplicates(hb); err != nil {
		return PushHeader{}, fmt.Errorf("%w: protected header: %w", ErrBadPush, err)
	}
	var hdr struct {
		Alg      string      `json:"alg"`
		Typ      string      `json:"typ"`
		Kid      string      `json:"kid"`
		Aud      string      `json:"aud"`
		Iat      json.Number `json:"iat"`
		Delivery string      `json:"vessel_delivery"`
		Task     string      `json:"vessel_task"`
	}
	if err := json.Unmarshal(hb, &hdr); err != nil {
		return PushHeader{}, fmt.Errorf("%w: protected header: %w", ErrBadPush, err)
	}
	if hdr.Typ != PushType || hdr.Alg != "ES256" || hdr.Kid == "" {
		return PushHeader{}, fmt.Errorf("%w: the protected header must carry kid, alg ES256 and typ %s", ErrBadPush, PushType)
	}
	iat, err := strconv.ParseInt(hdr.Iat.String(), 10, 64)
	if err != nil || hdr.Aud == "" || hdr.Delivery == "" || hdr.Task == "" {
		return PushHeader{}, fmt.Errorf("%w: the protected header must carry aud, iat (whole seconds), %s and %s", ErrBadPush, DeliveryHeader, TaskHeader)
	}
	return PushHeader{KeyID: hdr.Kid, PushClaims: PushClaims{Audience: hdr.Aud, TaskID: hdr.Task,
		DeliveryID: hdr.Delivery, IssuedAt: time.Unix(iat, 0)}}, nil
}

// VerifyPush checks a push signature (SignPush) over body against the key
// set: its header is well formed (ReadPush), its kid is in set
// (ErrUnknownKey otherwise) and the signature verifies. It returns the
// header; the caller checks its claims (the audience is its own URL, the
// time is recent, the delivery id is the header's).
func VerifyPush(signature string, body []byte, set jwk.Set) (PushHeader, error) {
	h, err := ReadPush(signature)
	if err != nil {
		return PushHeader{}, err
	}
	if set == nil || set.Len() == 0 {
		return PushHeader{}, errors.New("cardsig: the key set is empty")
	}
	if _, ok := set.LookupKeyID(h.KeyID); !ok {
		return PushHeader{}, fmt.Errorf("%w: kid %s", ErrUnknownKey, h.KeyID)
	}
	if _, err := jws.Verify([]byte(signature), jws.WithKeySet(set, jws.WithRequireKid(true)), jws.WithDetachedPayload(body)); err != nil {
		return PushHeader{}, fmt.Errorf("%w: kid %s: %w", ErrBadPush, h.KeyID, err)
	}
	return h, nil
}
