package a2aserver

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/astraldeep/astralvessel-go/runtime/outputfiles"
	"github.com/astraldeep/astralvessel-go/runtime/toolset"
	"github.com/astraldeep/astralvessel-go/vessel/client/cardsig"
	"github.com/astraldeep/astralvessel-go/vessel/scopes"
	"github.com/astraldeep/astralvessel-go/vessel/settings"
	"github.com/astraldeep/astralvessel-go/vessel/transcript"
)

// Media types of the card and of outputs.
const (
	MediaMarkdown   = "text/markdown"
	MediaPrimitives = "application/vnd.astral.primitives+json"
	ProviderOrg     = "AstralVessel"
	ProviderURL     = "https://github.com/AstralDeep/AstralVessel"
)

// strongestScope is the strongest scope among an agent's tools.
func strongestScope(a *settings.Agent) string {
	m := a.Manifest
	list := make([]string, 0, len(m.Tools.Enabled)+len(m.Declared))
	for _, name := range m.Tools.Enabled {
		list = append(list, toolset.BuiltinTools[name])
	}
	for _, t := range m.Declared {
		list = append(list, scopes.Of(t.Scope))
	}
	// MCP tools: the remote grants' and the package's stdio servers'.
	grants := make([]settings.MCPServer, 0, len(a.MCP)+len(m.MCP))
	for _, g := range a.MCP {
		grants = append(grants, g)
	}
	for _, t := range m.MCP {
		if t.MCP != nil {
			grants = append(grants, t.MCP.Grant())
		}
	}
	for _, g := range grants {
		if g.Scope != "" {
			list = append(list, scopes.Of(g.Scope))
		}
		for _, sc := range g.Scopes {
			list = append(list, scopes.Of(sc))
		}
	}
	return scopes.Strongest(list)
}

// BuildCard builds an agent's card; baseURL is the public base (no slash).
func BuildCard(a *settings.Agent, baseURL string) *a2a.AgentCard {
	m := a.Manifest
	in := []string{"text/plain", transcript.MediaType}
	if m.Model.AcceptsImages {
		in = append(in, "image/png", "image/jpeg", "image/gif", "image/webp")
	}
	out := []string{MediaMarkdown, transcript.MediaType}
	if m.Output.Primitives || slices.Contains(m.Tools.Enabled, "present") {
		out = append(out, MediaPrimitives)
	}
	for _, f := range m.Output.Files {
		if mt := outputfiles.MediaType(f); mt != "" && !slices.Contains(out, mt) {
			out = append(out, mt)
		}
	}
	examples := m.Examples
	if examples == nil {
		examples = []string{}
	}
	return &a2a.AgentCard{
		Name:        a.ID,
		Description: m.Description,
		Version:     m.Version,
		SupportedInterfaces: []*a2a.AgentInterface{
			a2a.NewAgentInterface(baseURL+"/agents/"+a.ID, a2a.TransportProtocolJSONRPC),
			a2a.NewAgentInterface(baseURL+"/agents/"+a.ID+RESTPath, a2a.TransportProtocolHTTPJSON),
		},
		Capabilities:       a2a.AgentCapabilities{Streaming: true},
		DefaultInputModes:  in,
		DefaultOutputModes: out,
		Skills: []a2a.AgentSkill{{
			ID: a.ID, Name: m.Name, Description: m.Description,
			Tags:     []string{"astralvessel", "scope:" + strongestScope(a)},
			Examples: examples,
		}},
		Provider: &a2a.AgentProvider{Org: ProviderOrg, URL: ProviderURL},
	}
}

// signedCardDoc renders a card, signed with the card keys when there are
// any.
func (s *Server) signedCardDoc(card *a2a.AgentCard, mod time.Time) (*cardDoc, error) {
	if s.cfg.CardKeys == nil {
		return newCardDoc(card, mod)
	}
	card.Signatures = nil
	b, err := json.Marshal(card)
	if err != nil {
		return nil, fmt.Errorf("encode card: %w", err)
	}
	sig, err := s.cfg.CardKeys.Sign(b)
	if err != nil {
		return nil, fmt.Errorf("sign card: %w", err)
	}
	card.Signatures = []a2a.AgentCardSignature{{Protected: sig.Protected, Signature: sig.Signature}}
	return newCardDoc(card, mod)
}

// jwks serves the card-signing public keys (404 when cards are unsigned).
func (s *Server) jwks(w http.ResponseWriter, r *http.Request) {
	if s.cfg.CardKeys == nil {
		writeJSONError(w, http.StatusNotFound, "agent cards are not signed")
		return
	}
	b, err := s.cfg.CardKeys.JWKS()
	if err != nil {
		writeJSONError(w, http.StatusInternalServerError, "internal error")
		return
	}
	doc := newCardDocBytes(b, s.started)
	doc.mediaType = cardsig.JWKSMediaType
	doc.serve(w, r)
}

// cardDoc is a card rendered once with its cache validators.
type cardDoc struct {
	mediaType string // default application/json
	body      []byte
	etag      string
	modTime   time.Time
}

func newCardDoc(card *a2a.AgentCard, mod time.Time) (*cardDoc, error) {
	b, err := json.Marshal(card)
	if err != nil {
		return nil, fmt.Errorf("encode card: %w", err)
	}
	return newCardDocBytes(b, mod), nil
}

func newCardDocBytes(b []byte, mod time.Time) *cardDoc {
	sum := sha256.Sum256(b)
	return &cardDoc{body: b, etag: `"` + hex.EncodeToString(sum[:16]) + `"`, modTime: mod.UTC().Truncate(time.Second)}
}

// serve writes the card with ETag, Last-Modified and Cache-Control, and
// answers conditional requests with 304.
func (c *cardDoc) serve(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", "*")
	if r.Method == http.MethodOptions {
		h.Set("Access-Control-Allow-Methods", "GET, OPTIONS")
		h.Set("Access-Control-Allow-Headers", "*")
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD, OPTIONS")
		writeJSONError(w, http.StatusMethodNotAllowed, "method not allowed")
		return
	}
	h.Set("ETag", c.etag)
	h.Set("Last-Modified", c.modTime.Format(http.TimeFormat))
	h.Set("Cache-Control", "public, max-age=300")
	if inm := r.Header.Get("If-None-Match"); inm != "" {
		if etagMatch(inm, c.etag) {
			w.WriteHeader(http.StatusNotModified)
			return
		}
	} else if ims := r.Header.Get("If-Modified-Since"); ims != "" {
		if t, err := http.ParseTime(ims); err == nil && !c.modTime.After(t) {
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	mt := c.mediaType
	if mt == "" {
		mt = "application/json"
	}
	h.Set("Content-Type", mt)
	h.Set("Content-Length", strconv.Itoa(len(c.body)))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_, _ = w.Write(c.body)
	}
}

func etagMatch(header, etag string) bool {
	for _, v := range strings.Split(header, ",") {
		v = strings.TrimSpace(v)
		if v == "*" || strings.TrimPrefix(v, "W/") == etag {
			return true
		}
	}
	return false
}
