package client

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/astraldeep/astralvessel-go/vessel/client/cardsig"
)

// TestCardVerification: a signed card verifies against the vessel's key
// set; a card changed after signing, and an unsigned one, are refused.
func TestCardVerification(t *testing.T) {
	raw, err := cardsig.Generate()
	if err != nil {
		t.Fatal(err)
	}
	keys, err := cardsig.ParseKeys(raw)
	if err != nil {
		t.Fatal(err)
	}
	jwks, _ := keys.JWKS()
	base := `{"name":"birds","description":"Answers questions about birds.","version":"1.0","supportedInterfaces":[{"url":"http://x/agents/birds","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],"capabilities":{"streaming":true},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/markdown"],"skills":[]}`
	sig, err := keys.Sign([]byte(base))
	if err != nil {
		t.Fatal(err)
	}
	sigJSON, _ := json.Marshal([]cardsig.Signature{sig})
	signed := strings.TrimSuffix(base, "}") + `,"signatures":` + string(sigJSON) + "}"
	cards := map[string]string{
		"birds":    signed,
		"tampered": strings.Replace(signed, "questions about birds", "your keys", 1),
		"unsigned": base,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == cardsig.JWKSPath {
			_, _ = w.Write(jwks)
			return
		}
		id, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/agents/"), "/")
		c, ok := cards[id]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(c))
	}))
	defer srv.Close()
	get := func(agent string, verify bool) error {
		c, err := New(srv.URL, agent, Options{AppKey: testKey, User: "alice"})
		if err != nil {
			t.Fatal(err)
		}
		card, err := c.Card(t.Context(), verify)
		if err == nil && card.Name != "birds" {
			t.Errorf("%s: card name %q", agent, card.Name)
		}
		return err
	}
	if err := get("birds", true); err != nil {
		t.Fatalf("signed card: %v", err)
	}
	if err := get("tampered", true); !errors.Is(err, cardsig.ErrBadSignature) {
		t.Fatalf("tampered card: %v", err)
	}
	if err := get("tampered", false); err != nil {
		t.Fatalf("tampered card read without verification: %v", err)
	}
	if err := get("unsigned", true); !errors.Is(err, cardsig.ErrUnsigned) {
		t.Fatalf("unsigned card: %v", err)
	}
	if err := get("nobody", true); !errors.Is(err, ErrNotFound) {
		t.Fatalf("no card: %v", err)
	}
}
