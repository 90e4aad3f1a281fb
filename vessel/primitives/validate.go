// Package primitives checks AstralPrimitives components before they reach an
// answer, and implements the built-in `present` tool that attaches them.
//
// Components come from the model, so they are input: each must have a
// registered wire type, the fields that type needs, values of the right
// kind, finite numbers only, and nested components that pass the same
// checks, all within size caps. What passes is normalized to the strict wire
// shape (defaults filled, nulls dropped, numbers as float64) so AstralDeep
// and the other renderers get canonical payloads. Errors name the path and
// what to change, so the model can fix its call.
package primitives

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// MediaType is the media type of the answer part that carries primitives.
const MediaType = "application/vnd.astral.primitives+json"

// Limits bound what one call may attach.
type Limits struct {
	MaxBytes      int // size of the JSON the model sent
	MaxComponents int // components, nested ones included
	MaxDepth      int // nesting of components inside components
	MaxJSONDepth  int // nesting of any JSON value
	MaxErrors     int // errors reported at once
}

// DefaultLimits are used where a zero Limits is given.
var DefaultLimits = Limits{MaxBytes: 1 << 20, MaxComponents: 500, MaxDepth: 12, MaxJSONDepth: 64, MaxErrors: 20}

func (l Limits) orDefault() Limits {
	d := DefaultLimits
	if l.MaxBytes > 0 {
		d.MaxBytes = l.MaxBytes
	}
	if l.MaxComponents > 0 {
		d.MaxComponents = l.MaxComponents
	}
	if l.MaxDepth > 0 {
		d.MaxDepth = l.MaxDepth
	}
	if l.MaxJSONDepth > 0 {
		d.MaxJSONDepth = l.MaxJSONDepth
	}
	if l.MaxErrors > 0 {
		d.MaxErrors = l.MaxErrors
	}
	return d
}

// ValidationError lists every problem found (up to Limits.MaxErrors), each
// as "path: what to fix".
type ValidationError struct {
	Problems  []string
	Truncated bool
}

func (e *ValidationError) Error() string {
	var b strings.Builder
	b.WriteString("invalid components: ")
	b.WriteString(strings.Join(e.Problems, "; "))
	if e.Truncated {
		b.WriteString("; (more problems not shown)")
	}
	return b.String()
}

// ErrTooLarge is wrapped when the input exceeds a size cap.
var ErrTooLarge = errors.New("components too large")

type checker struct {
	lim      Limits
	problems []string
	trunc    bool
	count    int
	stop     bool // a cap was hit; further checks are pointless
}

func (c *checker) fail(path, format string, args ...any) {
	if len(c.problems) >= c.lim.MaxErrors {
		c.trunc = true
		return
	}
	c.problems = append(c.problems, path+": "+fmt.Sprintf(format, args...))
}

// Parse decodes the model's JSON (the present tool's arguments: an object
// {"components": [...]}; a bare list, or one component object, is also
// taken) and validates it. It returns the normalized components.
func Parse(raw []byte, lim Limits) ([]any, error) {
	lim = lim.orDefault()
	if len(raw) > lim.MaxBytes {
		return nil, fmt.Errorf("%w: %d bytes, at most %d; attach fewer or smaller components", ErrTooLarge, len(raw), lim.MaxBytes)
	}
	v, err := decodeJSON(raw, lim.MaxJSONDepth)
	if err != nil {
		return nil, fmt.Errorf(`arguments must be JSON like {"components": [{"type": "text", "content": "..."}]}: %w`, err)
	}
	var list []any
	switch t := v.(type) {
	case map[string]any:
		if cs, ok := t["components"]; ok {
			l, ok := cs.([]any)
			if !ok {
				return nil, &ValidationError{Problems: []string{"components: must be a list of components"}}
			}
			list = l
		} else if _, ok := t["type"]; ok {
			list = []any{t}
		} else {
			return nil, &ValidationError{Problems: []string{`arguments: need "components", a list of components`}}
		}
	case []any:
		list = t
	default:
		return nil, &ValidationError{Problems: []string{"arguments: must be an object with a \"components\" list"}}
	}
	return Validate(list, lim)
}

// Validate checks decoded components (numbers as json.Number or float64)
// and returns their normalized form. It never modifies its input.
func Validate(list []any, lim Limits) ([]any, error) {
	lim = lim.orDefault()
	c := &checker{lim: lim}
	if len(list) == 0 {
		return nil, &ValidationError{Problems: []string{"components: the list is empty; give at least one component"}}
	}
	out := c.children("components", list, 1)
	if len(c.problems) > 0 {
		return nil, &ValidationError{Problems: c.problems, Truncated: c.trunc}
	}
	return out, nil
}

func (c *checker) children(path string, list []any, depth int) []any {
	out := make([]any, 0, len(list))
	for i, item := range list {
		if c.stop {
			break
		}
		out = append(out, c.component(fmt.Sprintf("%s[%d]", path, i), item, depth))
	}
	return out
}

func (c *checker) component(path string, v any, depth int) any {
	c.count++
	if c.count > c.lim.MaxComponents {
		c.fail(path, "too many components (at most %d in one call); attach fewer", c.lim.MaxComponents)
		c.stop = true
		return nil
	}
	if depth > c.lim.MaxDepth {
		c.fail(path, "components are nested too deeply (at most %d levels); flatten the layout", c.lim.MaxDepth)
		c.stop = true
		return nil
	}
	obj, ok := v.(map[string]any)
	if !ok {
		c.fail(path, `must be a component object like {"type": "text", "content": "..."}, got %s`, describe(v))
		return nil
	}
	typRaw, ok := obj["type"]
	if !ok {
		c.fail(path, `component needs a "type" (one of: %s)`, strings.Join(typeOrder, ", "))
		return nil
	}
	typ, ok := typRaw.(string)
	if !ok || typ == "" {
		c.fail(path+".type", "must be a non-empty string")
		return nil
	}
	fields, ok := types[typ]
	if !ok {
		c.fail(path+".type", "unknown type %q; use one of: %s", truncate(typ, 40), strings.Join(typeOrder, ", "))
		return nil
	}
	out := map[string]any{"type": typ}
	known := map[string]bool{"type": true}
	for _, f := range append(append([]field{}, common...), fields...) {
		known[f.name] = true
		val, present := obj[f.name]
		if present && val == nil {
			if f.pres == required {
				c.fail(path, "%s requires %q (%s), not null", typ, f.name, kindNames[f.kind])
			}
			present = false
		}
		if !present {
			switch f.pres {
			case required:
				c.fail(path, "%s requires %q (%s)", typ, f.name, kindNames[f.kind])
			case defaulted:
				out[f.name] = f.def()
			}
			continue
		}
		if nv, ok := c.value(path+"."+f.name, typ, f, val, depth); ok {
			out[f.name] = nv
		}
	}
	// Unknown keys pass through, as the wire schema allows, once checked
	// to be plain finite JSON. "attributes" is refused: the Python renderer
	// merges it over the declared fields, type included.
	extra := make([]string, 0)
	for k := range obj {
		if !known[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	for _, k := range extra {
		if k == "attributes" {
			c.fail(path+".attributes", "not allowed; put extra keys directly on the component")
			continue
		}
		if obj[k] == nil {
			continue // canonical output carries no nulls
		}
		if nv, ok := c.anyValue(path+"."+k, obj[k]); ok {
			out[k] = nv
		}
	}
	return out
}

// value checks one declared field and returns its normalized form.
func (c *checker) value(path, typ string, f field, v any, depth int) (any, bool) {
	bad := func() (any, bool) {
		c.fail(path, "must be %s, got %s", kindNames[f.kind], describe(v))
		return nil, false
	}
	switch f.kind {
	case kStr:
		s, ok := v.(string)
		if !ok {
			return bad()
		}
		if f.enum != nil && !contains(f.enum, s) {
			c.fail(path, "%q is not allowed for %s; use one of: %s", truncate(s, 40), typ, strings.Join(f.enum, ", "))
			return nil, false
		}
		return s, true
	case kBool:
		b, ok := v.(bool)
		if !ok {
			return bad()
		}
		return b, true
	case kNum, kInt:
		n, ok := c.number(path, v, f.kind == kInt)
		if !ok {
			return nil, false
		}
		if f.unit && (n < 0 || n > 1) {
			c.fail(path, "must be between 0 and 1 (a fraction: 62%% is 0.62), got %v", n)
			return nil, false
		}
		return n, true
	case kChildren, kButtons:
		l, ok := v.([]any)
		if !ok {
			return bad()
		}
		out := c.children(path, l, depth+1)
		if f.kind == kButtons {
			c.buttons(path, l)
		}
		return out, true
	case kTabs:
		l, ok := v.([]any)
		if !ok {
			return bad()
		}
		out := make([]any, 0, len(l))
		for i, t := range l {
			out = append(out, c.tab(fmt.Sprintf("%s[%d]", path, i), t, depth))
		}
		return out, true
	case kObj:
		if _, ok := v.(map[string]any); !ok {
			return bad()
		}
		return c.anyValue(path, v)
	case kStrMap:
		m, ok := v.(map[string]any)
		if !ok {
			return bad()
		}
		return c.strMap(path, m), true
	case kStrList, kNumList, kIntList, kObjList, kStrOrObjs, kRows:
		l, ok := v.([]any)
		if !ok {
			return bad()
		}
		return c.list(path, f.kind, l), true
	}
	return bad()
}

// buttons checks that an action_group holds only buttons.
func (c *checker) buttons(path string, l []any) {
	for i, b := range l {
		if m, ok := b.(map[string]any); ok && m["type"] != "button" && m["type"] != nil {
			c.fail(fmt.Sprintf("%s[%d]", path, i), "action_group buttons must be components of type \"button\"")
		}
	}
}

// strMap keeps the string values of a string map, failing on the others.
func (c *checker) strMap(path string, m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, x := range m {
		s, ok := x.(string)
		if !ok {
			c.fail(path+"."+k, "must be a string, got %s", describe(x))
			continue
		}
		out[k] = s
	}
	return out
}

// list keeps the items of a list field that are of its kind, failing on
// the others.
func (c *checker) list(path string, k kind, l []any) []any {
	out := make([]any, 0, len(l))
	for i, x := range l {
		if nv, ok := c.listItem(fmt.Sprintf("%s[%d]", path, i), k, x); ok {
			out = append(out, nv)
		}
	}
	return out
}

// listItem checks one item of a list field of kind k.
func (c *checker) listItem(p string, k kind, x any) (any, bool) {
	switch k {
	case kStrList:
		s, ok := x.(string)
		if !ok {
			c.fail(p, "must be a string, got %s", describe(x))
			return nil, false
		}
		return s, true
	case kNumList, kIntList:
		return c.number(p, x, k == kIntList)
	case kObjList:
		if _, ok := x.(map[string]any); !ok {
			c.fail(p, "must be an object, got %s", describe(x))
			return nil, false
		}
		return c.anyValue(p, x)
	case kStrOrObjs:
		switch x.(type) {
		case string, map[string]any:
			return c.anyValue(p, x)
		}
		c.fail(p, "must be a string or an object, got %s", describe(x))
		return nil, false
	case kRows:
		if _, ok := x.([]any); !ok {
			c.fail(p, "each row must be a list of cells, got %s", describe(x))
			return nil, false
		}
		return c.anyValue(p, x)
	}
	return nil, false
}

// tab checks a tab_item: {label, content, [value]} and nothing else (the
// wire schema closes this object).
func (c *checker) tab(path string, v any, depth int) any {
	m, ok := v.(map[string]any)
	if !ok {
		c.fail(path, `each tab must be an object {"label": "...", "content": [components]}, got %s`, describe(v))
		return nil
	}
	out := map[string]any{}
	label, ok := m["label"].(string)
	if !ok {
		c.fail(path, `tab requires "label" (a string)`)
	} else {
		out["label"] = label
	}
	content, ok := m["content"].([]any)
	if !ok {
		c.fail(path, `tab requires "content" (a list of components)`)
	} else {
		out["content"] = c.children(path+".content", content, depth+1)
	}
	if val, ok := m["value"]; ok && val != nil {
		s, ok := val.(string)
		if !ok {
			c.fail(path+".value", "must be a string, got %s", describe(val))
		} else {
			out["value"] = s
		}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		if k != "label" && k != "content" && k != "value" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		c.fail(path+"."+k, `unknown tab key; a tab has only "label", "content" and "value"`)
	}
	return out
}

// number reads a JSON number, refusing non-finite or out-of-range values.
func (c *checker) number(path string, v any, whole bool) (float64, bool) {
	var f float64
	switch n := v.(type) {
	case json.Number:
		x, err := strconv.ParseFloat(string(n), 64)
		if err != nil {
			c.fail(path, "number %s is out of range", truncate(string(n), 40))
			return 0, false
		}
		f = x
	case float64:
		f = n
	case int:
		f = float64(n)
	default:
		if whole {
			c.fail(path, "must be a whole number, got %s", describe(v))
		} else {
			c.fail(path, "must be a number, got %s", describe(v))
		}
		return 0, false
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		c.fail(path, "must be a finite number")
		return 0, false
	}
	if whole && (f != math.Trunc(f) || math.Abs(f) > 1<<53) {
		c.fail(path, "must be a whole number, got %v", f)
		return 0, false
	}
	return f, true
}

// anyValue checks free-form JSON (payloads, rows, chart data) for finite
// numbers and returns it normalized to map[string]any, []any, string, bool,
// float64 and nil.
func (c *checker) anyValue(path string, v any) (any, bool) {
	ok := true
	var walk func(p string, v any) any
	walk = func(p string, v any) any {
		switch t := v.(type) {
		case nil, string, bool:
			return t
		case json.Number, float64, int:
			n, good := c.number(p, t, false)
			if !good {
				ok = false
			}
			return n
		case []any:
			out := make([]any, len(t))
			for i, x := range t {
				out[i] = walk(fmt.Sprintf("%s[%d]", p, i), x)
			}
			return out
		case map[string]any:
			out := make(map[string]any, len(t))
			for k, x := range t {
				out[k] = walk(p+"."+k, x)
			}
			return out
		default:
			c.fail(p, "unsupported value %s", describe(v))
			ok = false
			return nil
		}
	}
	out := walk(path, v)
	return out, ok
}

// decodeJSON decodes one JSON value with numbers kept as json.Number,
// refusing trailing data and nesting deeper than maxDepth.
func decodeJSON(raw []byte, maxDepth int) (any, error) {
	if err := checkDepth(raw, maxDepth); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(raw[dec.InputOffset():])) > 0 {
		return nil, errors.New("trailing data after the JSON value")
	}
	return v, nil
}

// checkDepth scans brackets outside strings so a deeply nested document is
// refused before it is decoded.
func checkDepth(raw []byte, max int) error {
	depth, inStr, esc := 0, false, false
	for _, b := range raw {
		switch {
		case inStr:
			switch {
			case esc:
				esc = false
			case b == '\\':
				esc = true
			case b == '"':
				inStr = false
			}
		case b == '"':
			inStr = true
		case b == '{' || b == '[':
			depth++
			if depth > max {
				return fmt.Errorf("%w: JSON nested more than %d levels", ErrTooLarge, max)
			}
		case b == '}' || b == ']':
			depth--
		}
	}
	return nil
}

func describe(v any) string {
	switch t := v.(type) {
	case nil:
		return "null"
	case string:
		return fmt.Sprintf("the string %q", truncate(t, 30))
	case bool:
		return fmt.Sprintf("%v", t)
	case json.Number:
		return "the number " + truncate(string(t), 30)
	case float64, int:
		return fmt.Sprintf("the number %v", t)
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
