package model

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/astraldeep/astralvessel-go/runtime/routes"
)

// The reader takes a provider's quirks from its profile (routes.Providers):
// which delta members are no provider field, which members go back on the
// assistant message and on each tool call, and which streamed arrays are
// merged into their non-streamed form.

// markers are the profiles a stream read under ProviderAuto switches to
// when it carries their marker member.
var markers = func() map[string]*routes.Provider {
	m := map[string]*routes.Provider{}
	for _, n := range routes.ProviderNames() {
		if p := routes.ProfileOf(n); p.Marker != "" {
			m[p.Marker] = p
		}
	}
	return m
}()

// autoProfile is the profile of a call that names none.
var autoProfile = routes.ProfileOf(routes.ProviderAuto)

// profile sets the profile the call reads with (nil: auto).
func (st *streamState) profile(p *routes.Provider) {
	if p == nil {
		p = autoProfile
	}
	st.prof = p
}

// marked reads the rest of the stream with the profile whose marker the
// stream carried, when the call's profile detects markers (auto).
func (st *streamState) marked(member string) {
	if p, ok := markers[member]; ok && st.prof.Detect {
		st.prof = p
		if st.dec != nil {
			st.dec.drop = p.Drop
		}
	}
}

// keep removes the members not in names; nil names keep all.
func (e *extras) keep(names []string) {
	if names == nil {
		return
	}
	j := 0
	for i, k := range e.keys {
		if slices.Contains(names, k) {
			e.keys[j], e.vals[j], e.kind[j] = k, e.vals[i], e.kind[i]
			j++
		}
	}
	e.keys, e.vals, e.kind = e.keys[:j], e.vals[:j], e.kind[:j]
}

// mergeText merges the streamed items of the named array members (see
// routes.Provider.MergeText).
func (e *extras) mergeText(names []string) {
	for i, k := range e.keys {
		if e.kind[i] == '[' && slices.Contains(names, k) {
			if v, ok := mergeTextItems(e.vals[i]); ok {
				e.vals[i] = v
			}
		}
	}
}

// textItem is one array item as members in order, with what the merge
// looks at.
type textItem struct {
	keys  []string
	vals  []json.RawMessage
	typ   string
	index json.RawMessage // nil: none
}

func (it *textItem) get(key string) (json.RawMessage, int) {
	i := slices.Index(it.keys, key)
	if i < 0 {
		return nil, -1
	}
	return it.vals[i], i
}

func (it *textItem) set(key string, v json.RawMessage) {
	if _, i := it.get(key); i >= 0 {
		it.vals[i] = v
		return
	}
	it.keys, it.vals = append(it.keys, key), append(it.vals, v)
}

// mergeTextItems merges consecutive "reasoning.text" items with the same
// index: their texts joined, signature and format the first non-empty,
// every other member the first item's. Elements are an array's items
// without brackets; ok is false when they are not objects as expected
// (they are then sent as received).
func mergeTextItems(elems []byte) ([]byte, bool) {
	var raw []json.RawMessage
	if json.Unmarshal(append(append([]byte{'['}, elems...), ']'), &raw) != nil {
		return nil, false
	}
	var out []*textItem
	for _, r := range raw {
		it, ok := parseItem(r)
		if !ok {
			return nil, false
		}
		if n := len(out); n > 0 && it.typ == "reasoning.text" && out[n-1].typ == it.typ &&
			it.index != nil && bytes.Equal(out[n-1].index, it.index) {
			if !joinItem(out[n-1], it) {
				return nil, false
			}
			continue
		}
		out = append(out, it)
	}
	var b []byte
	for i, it := range out {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '{')
		for j, k := range it.keys {
			if j > 0 {
				b = append(b, ',')
			}
			kb, _ := json.Marshal(k) // a string always marshals
			b = append(append(append(b, kb...), ':'), it.vals[j]...)
		}
		b = append(b, '}')
	}
	return b, true
}

// parseItem reads an object's members in order.
func parseItem(r json.RawMessage) (*textItem, bool) {
	dec := json.NewDecoder(bytes.NewReader(r))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	it := &textItem{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, false
		}
		k, _ := t.(string)
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return nil, false
		}
		if _, i := it.get(k); i >= 0 {
			return nil, false // a duplicate member: leave the item as sent
		}
		it.keys, it.vals = append(it.keys, k), append(it.vals, v)
		switch k {
		case "type":
			_ = json.Unmarshal(v, &it.typ)
		case "index":
			if string(v) != "null" {
				it.index = v
			}
		}
	}
	return it, true
}

// joinItem adds it to the item being merged into, m.
func joinItem(m, it *textItem) bool {
	var a, b string
	if v, _ := m.get("text"); v != nil && json.Unmarshal(v, &a) != nil {
		return false
	}
	if v, _ := it.get("text"); v != nil && json.Unmarshal(v, &b) != nil {
		return false
	}
	if v, _ := m.get("text"); v != nil || b != "" {
		var j bytes.Buffer
		enc := json.NewEncoder(&j)
		enc.SetEscapeHTML(false) // the text as the provider wrote it
		_ = enc.Encode(a + b)    // a string always encodes
		m.set("text", bytes.TrimRight(j.Bytes(), "\n"))
	}
	for _, k := range []string{"signature", "format"} {
		if cur, _ := m.get(k); nonEmpty(cur) {
			continue
		}
		if v, _ := it.get(k); nonEmpty(v) {
			m.set(k, v)
		}
	}
	return true
}

// nonEmpty: a member's value other than none, null and "".
func nonEmpty(v json.RawMessage) bool {
	return v != nil && string(v) != "null" && string(v) != `""`
}
