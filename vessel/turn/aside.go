package turn

import "context"

// Aside is a transcript part's bytes taken out of a request before the SDK
// decodes it (vessel/a2acompat lifts it from the JSON-RPC body), so the
// history is decoded once, from the body, instead of once per SDK layer.
// The message the SDK builds keeps the part in its place with empty raw
// content; Parse reads the bytes from here instead, and drops them once
// the history is parsed.
type Aside struct {
	// Part is the index of the lifted part in the message's parts.
	Part int
	// Bytes is the part's decoded content; nil once taken.
	Bytes []byte
	// Over, set instead of Bytes, says the part's history holds more than
	// transcript.MaxMessages messages, counted as transcript.Parse counts
	// (transcript.CountMessages) before the rest of it was read: the part
	// is refused with transcript.ErrOverCap, as Parse would refuse it. The
	// message keeps the part empty (raw "" or data {}). Only the vessel's
	// front handler puts an Aside in a turn's context: nothing a caller
	// sends can set it.
	Over bool
}

// take returns the bytes and drops the Aside's hold on them.
func (a *Aside) take() []byte {
	b := a.Bytes
	a.Bytes = nil
	return b
}

type asideKey struct{}

// WithAside returns ctx carrying a.
func WithAside(ctx context.Context, a *Aside) context.Context {
	return context.WithValue(ctx, asideKey{}, a)
}

// AsideFrom returns the Aside ctx carries, or nil.
func AsideFrom(ctx context.Context) *Aside {
	a, _ := ctx.Value(asideKey{}).(*Aside)
	return a
}
