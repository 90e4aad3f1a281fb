package routes

import (
	"maps"
	"slices"
)

// Provider is a provider profile: the quirks of one provider's
// OpenAI-compatible API that the vessel's stream reader and request writer
// take as data. A route names its profile with `provider`; a route without
// one uses ProviderAuto, which is how the reader behaved before profiles.
//
// The table is Go, not an embedded file: validate and the vessel read the
// same values without a parse step that could fail at start, the compiler
// checks every entry, and a test keeps the table and docs/models.md in step.
// It lives in runtime, not in vessel/model, because validate needs the names
// and token-parameter defaults and the deployer does not import the vessel.
type Provider struct {
	// TokenParam is the name the agent's max_output_tokens is sent under
	// on a route of this provider that sets no token_param.
	TokenParam string
	// Drop are members of a streamed delta that are not provider fields
	// (so never sent back): a server's own numbering. nil: the auto
	// profile's (index, token_id), as every profile dropped before
	// profiles; empty: none. OpenAI's members the reader knows (role,
	// function_call, annotations, audio) are never carried whatever the
	// profile.
	Drop []string
	// SendBack are the members sent back on the assistant message of the
	// next request (the reasoning fields reasoning_content and reasoning
	// included); nil: every member the reader does not know and the
	// reasoning; empty: none.
	SendBack []string
	// CallSendBack are the members sent back on each tool call; nil: every
	// member the reader does not know; empty: none.
	CallSendBack []string
	// Marker is a top-level chunk member only this provider sends: a
	// stream carrying it, read with a Detect profile, is read with this
	// profile from then on. The reader recognises x_groq.
	Marker string
	// Detect: a stream carrying a profile's Marker switches to it (auto).
	Detect bool
	// MergeText names array members whose streamed items are merged, item
	// by item, into what a non-streamed answer holds: consecutive items of
	// type "reasoning.text" with the same index become one (texts joined,
	// signature and format the first non-empty, other members the first
	// item's).
	MergeText []string
}

// ProviderAuto is the profile of a route that names none.
const ProviderAuto = "auto"

// Providers are the profiles a route's provider may name. Sources: each
// provider's documentation of what its API accepts back (see
// docs/models.md, "Providers").
var Providers = withAutoDrop(map[string]Provider{
	// Every field the reader does not know is carried back, except from a
	// stream that carries Groq's x_groq; the numbering members servers add
	// to deltas are dropped.
	ProviderAuto: {TokenParam: TokenParamMaxTokens, Drop: []string{"index", "token_id"}, Detect: true},
	"openai":     {TokenParam: TokenParamMaxCompletionTokens},
	"azure":      {TokenParam: TokenParamMaxCompletionTokens},
	// DeepSeek's thinking mode needs reasoning_content back on a
	// tool-calling step's message; nothing else.
	"deepseek": {TokenParam: TokenParamMaxTokens, SendBack: []string{"reasoning_content"}, CallSendBack: []string{}},
	// Gemini's OpenAI endpoint: the thought signature, under
	// extra_content, on the call (and on the message when it has no call).
	"gemini": {TokenParam: TokenParamMaxTokens, SendBack: []string{"extra_content"}, CallSendBack: []string{"extra_content"}},
	// Groq refuses any message field it does not know, its own reasoning
	// included.
	"groq": {TokenParam: TokenParamMaxTokens, SendBack: []string{}, CallSendBack: []string{}, Marker: "x_groq"},
	// OpenRouter: reasoning_details are sent back as its non-streamed
	// answers give them (its AI SDK provider merges the streamed pieces).
	"openrouter": {TokenParam: TokenParamMaxTokens, MergeText: []string{"reasoning_details"}},
	// Mistral repeats the choice's index in some deltas, Together numbers
	// each token (token_id): both in the auto profile's Drop, which every
	// profile that sets none takes.
	"mistral":   {TokenParam: TokenParamMaxTokens},
	"together":  {TokenParam: TokenParamMaxTokens},
	"vllm":      {TokenParam: TokenParamMaxTokens},
	"ollama":    {TokenParam: TokenParamMaxTokens},
	"llamacpp":  {TokenParam: TokenParamMaxTokens},
	"lmstudio":  {TokenParam: TokenParamMaxTokens},
	"anthropic": {TokenParam: TokenParamMaxTokens},
})

// withAutoDrop gives every profile whose Drop is nil a copy of the auto
// profile's (its own slice: an append to one profile's list must not
// reach another's).
func withAutoDrop(m map[string]Provider) map[string]Provider {
	for n, p := range m {
		if p.Drop == nil {
			p.Drop = slices.Clone(m[ProviderAuto].Drop)
			m[n] = p
		}
	}
	return m
}

// ProviderNames lists the profiles, sorted.
func ProviderNames() []string { return slices.Sorted(maps.Keys(Providers)) }

// ProfileOf is the named profile; "" and an unknown name (validate refuses
// it first) are ProviderAuto.
func ProfileOf(name string) *Provider {
	p, ok := Providers[name]
	if !ok {
		p = Providers[ProviderAuto]
	}
	return &p
}
