package a2acompat

import (
	"context"
	"fmt"
	"net/http"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// CardV03 returns a copy of card that also reads as an A2A 0.3 card: its
// one interface is JSON-RPC 0.3 at url, and the JSON (from the SDK's a2av0
// producer) carries both the 1.0 fields and the 0.3 ones (url,
// protocolVersion, preferredTransport). url should be the agent's own
// address, whose last path segment is its id: older AstralDeep builds take
// the agent id from it.
func CardV03(card *a2a.AgentCard, url string) *a2a.AgentCard {
	c := *card
	c.SupportedInterfaces = []*a2a.AgentInterface{{URL: url, ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2av0.Version}}
	return &c
}

// CardV03JSON encodes CardV03(card, url).
func CardV03JSON(ctx context.Context, card *a2a.AgentCard, url string) ([]byte, error) {
	p, ok := a2av0.NewStaticAgentCardProducer(CardV03(card, url)).(a2asrv.AgentCardJSONProducer)
	if !ok {
		return nil, fmt.Errorf("a2acompat: the SDK's 0.3 card producer has no CardJSON")
	}
	b, err := p.CardJSON(ctx)
	if err != nil {
		return nil, fmt.Errorf("a2acompat: 0.3 card: %w", err)
	}
	return b, nil
}

// CardV03Handler serves the 0.3 card (for GET {agent}/a2a/.well-known/agent-card.json,
// the path older AstralDeep builds read).
func CardV03Handler(card *a2a.AgentCard, url string) http.Handler {
	return a2asrv.NewAgentCardHandler(a2av0.NewStaticAgentCardProducer(CardV03(card, url)))
}
