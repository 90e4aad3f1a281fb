package client

import (
	"crypto"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/astraldeep/astralvessel-go/vessel/client/cardsig"
	"github.com/astraldeep/astralvessel-go/vessel/client/internal/testsign"
)

// cardFor is a card as the vessel builds it for agent id at base.
func cardFor(id, base string) []byte {
	return []byte(`{"name":"` + id + `","description":"Answers questions about birds.","version":"1.0","supportedInterfaces":[{"url":"` + base + `/agents/` + id + `","protocolBinding":"JSONRPC","protocolVersion":"1.0"},{"url":"` + base + `/agents/` + id + `/v1","protocolBinding":"HTTP+JSON","protocolVersion":"1.0"}],"capabilities":{"streaming":true},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/markdown"],"skills":[]}`)
}

// cardServer serves cards by agent id and a key set at cardsig.JWKSPath,
// both replaceable while it runs; it counts key set fetches.
type cardServer struct {
	*httptest.Server
	mu        sync.Mutex
	cards     map[string][]byte
	jwks      []byte
	jwksFetch int
}

func newCardServer(t *testing.T, tls bool) *cardServer {
	cs := &cardServer{cards: map[string][]byte{}}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cs.mu.Lock()
		defer cs.mu.Unlock()
		if r.URL.Path == cardsig.JWKSPath {
			cs.jwksFetch++
			_, _ = w.Write(cs.jwks)
			return
		}
		id, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/agents/"), "/")
		c, ok := cs.cards[id]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(c)
	})
	if tls {
		cs.Server = httptest.NewTLSServer(h)
	} else {
		cs.Server = httptest.NewServer(h)
	}
	t.Cleanup(cs.Close)
	return cs
}

func (cs *cardServer) set(id string, card, jwks []byte) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if card != nil {
		cs.cards[id] = card
	}
	if jwks != nil {
		cs.jwks = jwks
	}
}

func signed(t *testing.T, k *testsign.Keys, card []byte) []byte {
	t.Helper()
	b, err := k.SignedCard(card)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func thumbprint(t *testing.T, k *testsign.Keys) string {
	t.Helper()
	tp, err := k.Public().Thumbprint(crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	return base64.RawURLEncoding.EncodeToString(tp)
}

func readCard(t *testing.T, base, agent string, verify bool, opts Options) error {
	t.Helper()
	opts.AppKey, opts.User = testKey, "alice"
	c, err := New(base, agent, opts)
	if err != nil {
		t.Fatal(err)
	}
	card, err := c.Card(t.Context(), verify)
	if err == nil && card.Name != agent {
		t.Errorf("%s: card name %q", agent, card.Name)
	}
	return err
}

// TestCardVerification: a signed card verifies against the vessel's key
// set; a card changed after signing, and an unsigned one, are refused.
func TestCardVerification(t *testing.T) {
	k := testsign.New(t, "k1")
	srv := newCardServer(t, false)
	birds := signed(t, k, cardFor("birds", srv.URL))
	srv.set("birds", birds, testsign.JWKS(k))
	srv.set("tampered", []byte(strings.Replace(string(signed(t, k, cardFor("tampered", srv.URL))), "questions about birds", "your keys", 1)), nil)
	srv.set("unsigned", cardFor("unsigned", srv.URL), nil)
	if err := readCard(t, srv.URL, "birds", true, Options{}); err != nil {
		t.Fatalf("signed card: %v", err)
	}
	if err := readCard(t, srv.URL, "tampered", true, Options{}); !errors.Is(err, cardsig.ErrBadSignature) {
		t.Fatalf("tampered card: %v", err)
	}
	if err := readCard(t, srv.URL, "tampered", false, Options{}); err != nil {
		t.Fatalf("tampered card read without verification: %v", err)
	}
	if err := readCard(t, srv.URL, "unsigned", true, Options{}); !errors.Is(err, cardsig.ErrUnsigned) {
		t.Fatalf("unsigned card: %v", err)
	}
	if err := readCard(t, srv.URL, "nobody", true, Options{}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("no card: %v", err)
	}
}

// TestCardOfAnotherAgentRefused: the genuine, validly signed card of agent
// gated, served when field-guide-reader is asked for (whole, or with only
// its name or only an interface changed before signing), is refused with
// or without verification.
func TestCardOfAnotherAgentRefused(t *testing.T) {
	k := testsign.New(t, "k1")
	srv := newCardServer(t, false)
	gated := cardFor("gated", srv.URL)
	nameOnly := strings.Replace(string(cardFor("field-guide-reader", srv.URL)), `"name":"field-guide-reader"`, `"name":"gated"`, 1)
	pathOnly := strings.Replace(string(cardFor("field-guide-reader", srv.URL)), "/agents/field-guide-reader/v1", "/agents/gated/v1", 1)
	srv.set("gated", signed(t, k, gated), testsign.JWKS(k))
	if err := readCard(t, srv.URL, "gated", true, Options{}); err != nil {
		t.Fatalf("gated's own card: %v", err)
	}
	for name, card := range map[string][]byte{"gated's card": gated, "name": []byte(nameOnly), "interface": []byte(pathOnly)} {
		srv.set("field-guide-reader", signed(t, k, card), nil)
		for _, verify := range []bool{true, false} {
			if err := readCard(t, srv.URL, "field-guide-reader", verify, Options{}); !errors.Is(err, ErrWrongAgent) {
				t.Errorf("%s (verify %v): %v", name, verify, err)
			}
		}
	}
}

// TestCardKeysPinned: an impostor at the vessel's address serving a card
// of the right agent signed with its own key, and that key as the set, is
// accepted without a pin (the signature only proves who serves the keys)
// and refused when the application pins the vessel's keys, by thumbprint
// or by the vessel's https JWK set URL; the genuine card passes both pins.
func TestCardKeysPinned(t *testing.T) {
	genuine, impostor := testsign.New(t, "vessel"), testsign.New(t, "vessel") // the impostor even copies the kid
	keySrv := newCardServer(t, true)
	keySrv.set("", nil, testsign.JWKS(genuine))
	srv := newCardServer(t, false)
	byTP := Options{CardKeys: CardKeys{Thumbprints: []string{thumbprint(t, genuine)}}}
	byURL := Options{HTTPClient: keySrv.Client(), CardKeys: CardKeys{JWKSURL: keySrv.URL + cardsig.JWKSPath}}

	srv.set("field-guide-reader", signed(t, genuine, cardFor("field-guide-reader", srv.URL)), testsign.JWKS(genuine))
	for name, o := range map[string]Options{"none": {}, "thumbprint": byTP, "jwks url": byURL} {
		if err := readCard(t, srv.URL, "field-guide-reader", true, o); err != nil {
			t.Fatalf("genuine card, pin %s: %v", name, err)
		}
	}
	srv.set("field-guide-reader", signed(t, impostor, cardFor("field-guide-reader", srv.URL)), testsign.JWKS(impostor))
	if err := readCard(t, srv.URL, "field-guide-reader", true, Options{}); err != nil {
		t.Fatalf("impostor without a pin: %v (a self-consistent impostor passes unpinned)", err)
	}
	if err := readCard(t, srv.URL, "field-guide-reader", true, byTP); err == nil || !strings.Contains(err.Error(), "none of the pinned keys") {
		t.Fatalf("impostor, pinned by thumbprint: %v", err)
	}
	if err := readCard(t, srv.URL, "field-guide-reader", true, byURL); !errors.Is(err, cardsig.ErrBadSignature) {
		t.Fatalf("impostor, pinned by JWK set URL: %v", err)
	}
	// A pin the client cannot honour is refused at New.
	for _, bad := range []CardKeys{{JWKSURL: "http://keys.internal/jwks.json"}, {JWKSURL: "https://"}, {Thumbprints: []string{"abc"}}} {
		if _, err := New(srv.URL, "field-guide-reader", Options{AppKey: testKey, User: "alice", CardKeys: bad}); err == nil {
			t.Errorf("pin %+v accepted", bad)
		}
	}
}

// TestCardKeyRotation: one client reads the key set once for many cards,
// and fetches it again when a card names a kid it lacks.
func TestCardKeyRotation(t *testing.T) {
	oldK, newK := testsign.New(t, "old"), testsign.New(t, "new")
	srv := newCardServer(t, false)
	srv.set("birds", signed(t, oldK, cardFor("birds", srv.URL)), testsign.JWKS(oldK))
	c, err := New(srv.URL, "birds", Options{AppKey: testKey, User: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := c.Card(t.Context(), true); err != nil {
			t.Fatal(err)
		}
	}
	srv.set("birds", signed(t, newK, cardFor("birds", srv.URL)), testsign.JWKS(newK, oldK))
	if _, err := c.Card(t.Context(), true); err != nil {
		t.Fatalf("after rotation: %v", err)
	}
	if srv.jwksFetch != 2 {
		t.Fatalf("key set fetched %d times, want 2", srv.jwksFetch)
	}
}
