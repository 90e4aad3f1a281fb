package cardsign

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"

	"github.com/astraldeep/astralvessel-go/vessel/client/cardsig"
)

// A push signature carries its binding in the protected header, as a
// standard JOSE library reads it, verifies over the exact body only, and
// is refused without each claim.
func TestSignPushBinding(t *testing.T) {
	raw, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	k, err := ParseKeys(raw)
	if err != nil {
		t.Fatal(err)
	}
	pubJSON, _ := k.JWKS()
	pub, err := jwk.Parse(pubJSON)
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"statusUpdate":{"taskId":"t1"}}`)
	at := time.Unix(1_800_000_000, 0)
	c := cardsig.PushClaims{Audience: "https://app.internal:8443/hooks/a", TaskID: "t1", DeliveryID: "d1", IssuedAt: at}
	sig, err := k.SignPush(body, c)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(sig, ".")
	if len(parts) != 3 || parts[1] != "" {
		t.Fatalf("not a detached compact JWS: %s", sig)
	}
	hb, _ := base64.RawURLEncoding.DecodeString(parts[0])
	var hdr map[string]any
	if err := json.Unmarshal(hb, &hdr); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"alg": "ES256", "typ": cardsig.PushType, "kid": k.KeyID(), "aud": c.Audience,
		"iat": float64(at.Unix()), cardsig.DeliveryHeader: "d1", cardsig.TaskHeader: "t1"}
	if len(hdr) != len(want) {
		t.Fatalf("header %v", hdr)
	}
	for name, v := range want {
		if hdr[name] != v {
			t.Errorf("header %s = %v, want %v", name, hdr[name], v)
		}
	}
	// Any JOSE library: the body put back as the payload (RFC 7515
	// appendix F) verifies as an ordinary compact JWS.
	attached := parts[0] + "." + base64.RawURLEncoding.EncodeToString(body) + "." + parts[2]
	if got, err := jws.Verify([]byte(attached), jws.WithKeySet(pub, jws.WithRequireKid(true))); err != nil || string(got) != string(body) {
		t.Fatalf("attached verify: %q %v", got, err)
	}
	h, err := cardsig.VerifyPush(sig, body, pub)
	if err != nil || h.PushClaims != c || h.KeyID != k.KeyID() {
		t.Fatalf("verify: %+v %v", h, err)
	}
	if _, err := cardsig.VerifyPush(sig, append(body, ' '), pub); !errors.Is(err, cardsig.ErrBadPush) {
		t.Fatalf("changed body: %v", err)
	}
	other, _ := Generate()
	ok, _ := ParseKeys(other)
	oj, _ := ok.JWKS()
	oset, _ := jwk.Parse(oj)
	if _, err := cardsig.VerifyPush(sig, body, oset); !errors.Is(err, cardsig.ErrUnknownKey) {
		t.Fatalf("another set: %v", err)
	}
	for _, miss := range []cardsig.PushClaims{
		{TaskID: "t1", DeliveryID: "d1", IssuedAt: at},
		{Audience: "u", DeliveryID: "d1", IssuedAt: at},
		{Audience: "u", TaskID: "t1", IssuedAt: at},
		{Audience: "u", TaskID: "t1", DeliveryID: "d1"},
	} {
		if _, err := k.SignPush(body, miss); err == nil {
			t.Errorf("signed without a claim: %+v", miss)
		}
	}
}
