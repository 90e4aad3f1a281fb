package client

import (
	"context"
	"crypto"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/lestrrat-go/jwx/v3/jwk"

	"github.com/astraldeep/astralvessel-go/vessel/client/cardsig"
	"github.com/astraldeep/astralvessel-go/vessel/client/jwks"
)

// maxCard bounds a card or key set read from the vessel.
const maxCard = 1 << 20

// The card-signing keys are held for cardKeyAge, and fetched again when a
// card names a kid the set lacks (a rotated-in key). That refetch needs no
// rate limit: each follows a card fetch the application asked for, from
// the same server, so a forged kid can at most double those requests.
const cardKeyAge = 10 * time.Minute

// ErrWrongAgent is returned (wrapped) by Card when the card served is not
// the card of the agent the client calls: its name, or the agent path of
// one of its interfaces, names another agent.
var ErrWrongAgent = errors.New("client: the card names another agent")

// CardKeys pins the keys an agent card must be signed with. Without a pin
// a verified card only proves it was signed by whoever serves the keys at
// the vessel's address; with one, an impostor at that address holding its
// own key is refused.
type CardKeys struct {
	// JWKSURL, when set, is an https URL of the JWK set to verify cards
	// against, instead of the keys served beside the card.
	JWKSURL string
	// Thumbprints, when set, are the RFC 7638 SHA-256 thumbprints
	// (base64url, unpadded) of the keys accepted; keys of the set with
	// another thumbprint are ignored.
	Thumbprints []string
}

// newCardKeyCache makes the cache of card-signing keys: the pinned JWK set
// URL or the vessel's, filtered to the pinned thumbprints. It fetches
// nothing yet.
func newCardKeyCache(base string, hc *http.Client, pin CardKeys) (*jwks.Cache, error) {
	src := base + cardsig.JWKSPath
	if pin.JWKSURL != "" {
		u, err := url.Parse(pin.JWKSURL)
		if err != nil || u.Scheme != "https" || u.Host == "" {
			return nil, fmt.Errorf("client: CardKeys.JWKSURL %q is not an https URL", pin.JWKSURL)
		}
		src = pin.JWKSURL
	}
	want := map[string]bool{}
	for _, tp := range pin.Thumbprints {
		if b, err := base64.RawURLEncoding.DecodeString(tp); err != nil || len(b) != crypto.SHA256.Size() {
			return nil, fmt.Errorf("client: CardKeys thumbprint %q is not a base64url SHA-256 thumbprint", tp)
		}
		want[tp] = true
	}
	accept := func(set jwk.Set) (jwk.Set, error) {
		if set.Len() == 0 {
			return nil, errors.New("the card key set is empty")
		}
		if len(want) == 0 {
			return set, nil
		}
		return pinned(set, want)
	}
	return jwks.New(context.Background(), jwks.Config{
		Source: jwks.URL(hc, src, 0, maxCard),
		Accept: accept,
		MaxAge: cardKeyAge,
	}), nil
}

// pinned keeps the keys of set whose thumbprint is wanted.
func pinned(set jwk.Set, want map[string]bool) (jwk.Set, error) {
	out := jwk.NewSet()
	for i := range set.Len() {
		k, _ := set.Key(i)
		tp, err := k.Thumbprint(crypto.SHA256)
		if err != nil || !want[base64.RawURLEncoding.EncodeToString(tp)] {
			continue
		}
		if err := out.AddKey(k); err != nil {
			return nil, fmt.Errorf("card key set: %w", err)
		}
	}
	if out.Len() == 0 {
		return nil, errors.New("the card key set holds none of the pinned keys")
	}
	return out, nil
}

// Card fetches the agent's card and checks that it is this agent's: its
// name and the agent path of each of its HTTP interfaces name the agent
// the client calls (ErrWrongAgent). With verify, it also checks the
// card's signatures against the card-signing keys (the vessel's, at
// cardsig.JWKSPath, or those Options.CardKeys pins) and refuses a card
// none of whose signatures verifies (errors.Is cardsig.ErrBadSignature or
// cardsig.ErrUnsigned) or whose JSON names a member twice
// (cardsig.ErrDuplicateMember).
func (c *Client) Card(ctx context.Context, verify bool) (*a2a.AgentCard, error) {
	body, err := c.fetch(ctx, c.base+"/agents/"+c.agentID+"/.well-known/agent-card.json")
	if err != nil {
		return nil, fmt.Errorf("client: card: %w", err)
	}
	if verify {
		if err := c.verifyCard(ctx, body); err != nil {
			return nil, fmt.Errorf("client: card of %s: %w", c.agentID, err)
		}
	}
	var card a2a.AgentCard
	if err := json.Unmarshal(body, &card); err != nil {
		return nil, fmt.Errorf("client: card of %s: %w", c.agentID, err)
	}
	if err := namesAgent(&card, c.agentID); err != nil {
		return nil, fmt.Errorf("client: card of %s: %w", c.agentID, err)
	}
	return &card, nil
}

// verifyCard checks a card's signatures against the held keys; when a
// signature names a kid they lack, the set is fetched again first (within
// the rate limit), so a rotated-in key is picked up.
func (c *Client) verifyCard(ctx context.Context, body []byte) error {
	set, err := c.cardKeys.Keys(ctx)
	if err != nil {
		return fmt.Errorf("card-signing keys: %w", err)
	}
	for _, kid := range signatureKids(body) {
		if _, ok := set.LookupKeyID(kid); !ok {
			if set, err = c.cardKeys.KeysFor(ctx, kid); err != nil {
				return fmt.Errorf("card-signing keys: %w", err)
			}
			break
		}
	}
	_, err = cardsig.VerifySet(body, set)
	return err
}

// signatureKids lists the kids a card's signatures name (best effort: a
// malformed card is refused by cardsig.VerifySet).
func signatureKids(card []byte) []string {
	var doc struct {
		Signatures []cardsig.Signature `json:"signatures"`
	}
	if json.Unmarshal(card, &doc) != nil {
		return nil
	}
	var kids []string
	for _, s := range doc.Signatures {
		hb, err := base64.RawURLEncoding.DecodeString(s.Protected)
		if err != nil {
			continue
		}
		var h struct {
			Kid string `json:"kid"`
		}
		if json.Unmarshal(hb, &h) == nil && h.Kid != "" {
			kids = append(kids, h.Kid)
		}
	}
	return kids
}

// namesAgent checks that a card is agent id's: the vessel names a card
// after its agent and serves each HTTP binding under /agents/<id>.
func namesAgent(card *a2a.AgentCard, id string) error {
	if card.Name != id {
		return fmt.Errorf("%w: name %q", ErrWrongAgent, card.Name)
	}
	for _, i := range card.SupportedInterfaces {
		if i == nil || i.ProtocolBinding == BindingGRPC {
			continue // one gRPC listener serves every agent, told apart by tenant
		}
		u, err := url.Parse(i.URL)
		if err != nil {
			return fmt.Errorf("%w: interface URL %q", ErrWrongAgent, i.URL)
		}
		p := strings.TrimSuffix(u.Path, RESTPath)
		if !strings.HasSuffix(p, "/agents/"+id) {
			return fmt.Errorf("%w: interface %s", ErrWrongAgent, i.URL)
		}
	}
	return nil
}

func (c *Client) fetch(ctx context.Context, u string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxCard+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", u, err)
	}
	if len(b) > maxCard {
		return nil, fmt.Errorf("GET %s: over %d bytes", u, maxCard)
	}
	return b, nil
}

// GRPCAddress reads the agent's card (unverified) and returns the URL of
// its GRPC interface (host:port), the Options.GRPCAddress of a client on
// the gRPC binding. A card without one is an error.
func (c *Client) GRPCAddress(ctx context.Context) (string, error) {
	card, err := c.Card(ctx, false)
	if err != nil {
		return "", err
	}
	for _, i := range card.SupportedInterfaces {
		if i != nil && i.ProtocolBinding == BindingGRPC && i.URL != "" {
			return i.URL, nil
		}
	}
	return "", fmt.Errorf("client: the card of %s declares no GRPC interface", c.agentID)
}
