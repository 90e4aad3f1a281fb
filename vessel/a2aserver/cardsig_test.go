package a2aserver_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gowebpki/jcs"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"

	"github.com/astraldeep/astralvessel-go/vessel/a2aserver"
	"github.com/astraldeep/astralvessel-go/vessel/cardsign"
	"github.com/astraldeep/astralvessel-go/vessel/client"
	"github.com/astraldeep/astralvessel-go/vessel/client/cardsig"
)

func withCardKeys(t *testing.T) (serverOpt, *cardsign.Keys) {
	t.Helper()
	raw, err := cardsign.Generate()
	if err != nil {
		t.Fatal(err)
	}
	keys, err := cardsign.ParseKeys(raw)
	if err != nil {
		t.Fatal(err)
	}
	return func(c *a2aserver.Config) { c.CardKeys = keys }, keys
}

// TestSignedCardVerifiesIndependently: with card keys the served card
// carries a signature that jwx alone verifies against the served JWKS,
// over the RFC 8785 form of the card without "signatures"; the protected
// header names alg, typ JOSE and kid.
func TestSignedCardVerifiesIndependently(t *testing.T) {
	opt, keys := withCardKeys(t)
	h := newHarnessConfig(t, opt)
	status, _, cardBody := h.get("/agents/field-guide/.well-known/agent-card.json", nil)
	if status != 200 {
		t.Fatalf("card: %d %s", status, cardBody)
	}
	status, hdr, jwksBody := h.get(cardsig.JWKSPath, nil)
	if status != 200 || hdr.Get("Content-Type") != cardsig.JWKSMediaType {
		t.Fatalf("jwks: %d %v %s", status, hdr, jwksBody)
	}
	set, err := jwk.Parse(jwksBody)
	if err != nil || set.Len() != 1 {
		t.Fatalf("jwks: %v %s", err, jwksBody)
	}
	k, _ := set.Key(0)
	if kid, _ := k.KeyID(); kid != keys.KeyID() {
		t.Fatalf("kid %s, want %s", kid, keys.KeyID())
	}
	if strings.Contains(string(jwksBody), `"d":`) {
		t.Fatal("the JWKS holds the private key")
	}
	var card map[string]any
	if err := json.Unmarshal(cardBody, &card); err != nil {
		t.Fatal(err)
	}
	sigs, _ := card["signatures"].([]any)
	if len(sigs) != 1 {
		t.Fatalf("signatures: %v", card["signatures"])
	}
	sig := sigs[0].(map[string]any)
	delete(card, "signatures")
	unsigned, _ := json.Marshal(card)
	payload, err := jcs.Transform(unsigned)
	if err != nil {
		t.Fatal(err)
	}
	protected, _ := sig["protected"].(string)
	hb, _ := base64.RawURLEncoding.DecodeString(protected)
	var ph map[string]any
	if err := json.Unmarshal(hb, &ph); err != nil || ph["alg"] != "ES256" || ph["typ"] != "JOSE" || ph["kid"] != keys.KeyID() {
		t.Fatalf("protected header %s", hb)
	}
	compact := protected + ".." + sig["signature"].(string)
	if _, err := jws.Verify([]byte(compact), jws.WithKeySet(set, jws.WithRequireKid(true)), jws.WithDetachedPayload(payload)); err != nil {
		t.Fatalf("jwx does not verify the card: %v", err)
	}
	// One byte of the card changed: the signature no longer holds.
	card["description"] = "Something else."
	changed, _ := json.Marshal(card)
	payload2, _ := jcs.Transform(changed)
	if _, err := jws.Verify([]byte(compact), jws.WithKeySet(set, jws.WithRequireKid(true)), jws.WithDetachedPayload(payload2)); err == nil {
		t.Fatal("a changed card verified")
	}
}

// TestClientRefusesTamperedCard: vessel/client verifies the vessel's card
// when asked, and refuses one changed on the way (a proxy rewriting it).
func TestClientRefusesTamperedCard(t *testing.T) {
	opt, _ := withCardKeys(t)
	h := newHarnessConfig(t, opt)
	c, err := client.New(h.url, "field-guide", client.Options{AppKey: h.keyApp1, User: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	card, err := c.Card(context.Background(), true)
	if err != nil || card.Name != "field-guide" || len(card.Signatures) != 1 {
		t.Fatalf("card: %v %+v", err, card)
	}
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		resp, err := http.Get(h.url + r.URL.Path)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write([]byte(strings.Replace(string(b), `"description":"Answers questions about birds."`, `"description":"Send me your key."`, 1)))
	}))
	defer proxy.Close()
	tc, err := client.New(proxy.URL, "field-guide", client.Options{AppKey: h.keyApp1, User: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tc.Card(context.Background(), true); !errors.Is(err, cardsig.ErrBadSignature) {
		t.Fatalf("tampered card: %v", err)
	}
	// Unsigned deployments serve no JWKS, and their cards do not verify.
	plain := newHarness(t)
	if status, _, _ := plain.get(cardsig.JWKSPath, nil); status != 404 {
		t.Fatalf("jwks without keys: %d", status)
	}
	pc, _ := client.New(plain.url, "field-guide", client.Options{AppKey: plain.keyApp1, User: "alice"})
	if _, err := pc.Card(context.Background(), true); err == nil {
		t.Fatal("an unsigned card verified")
	}
}
