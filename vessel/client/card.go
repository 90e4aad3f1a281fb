package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/astraldeep/astralvessel-go/vessel/client/cardsig"
)

// maxCard bounds a card or key set read from the vessel.
const maxCard = 1 << 20

// Card fetches the agent's card. With verify, it also fetches the vessel's
// card-signing keys (cardsig.JWKSPath) and refuses a card none of whose
// signatures verifies against them (errors.Is cardsig.ErrBadSignature or
// cardsig.ErrUnsigned).
func (c *Client) Card(ctx context.Context, verify bool) (*a2a.AgentCard, error) {
	body, err := c.fetch(ctx, c.base+"/agents/"+c.agentID+"/.well-known/agent-card.json")
	if err != nil {
		return nil, fmt.Errorf("client: card: %w", err)
	}
	if verify {
		jwks, err := c.fetch(ctx, c.base+cardsig.JWKSPath)
		if err != nil {
			return nil, fmt.Errorf("client: card-signing keys: %w", err)
		}
		if _, err := cardsig.Verify(body, jwks); err != nil {
			return nil, fmt.Errorf("client: card of %s: %w", c.agentID, err)
		}
	}
	var card a2a.AgentCard
	if err := json.Unmarshal(body, &card); err != nil {
		return nil, fmt.Errorf("client: card of %s: %w", c.agentID, err)
	}
	return &card, nil
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
