package spec

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/pelletier/go-toml/v2/unstable"
)

// posMap records the line of every key in a TOML document, under the same
// dotted paths (with [i] for array elements) that validation messages use,
// so semantic errors point at a line just as syntax errors do.
type posMap struct {
	lines      map[string]int
	arrays     map[string]int // elements seen so far per array-of-tables path
	lineStarts []int          // byte offset where each line begins
}

// line returns the line of path, or of its nearest recorded parent, or 0.
func (m *posMap) line(path string) int {
	if m == nil {
		return 0
	}
	for path != "" {
		if l, ok := m.lines[path]; ok {
			return l
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			break
		}
		path = path[:i]
	}
	return 0
}

// indexed finds the path with array indices (agents[1].sandbox.scratch) of
// a key that go-toml names without them (agents.sandbox.scratch) on a line.
func (m *posMap) indexed(line int, key string) string {
	best := ""
	for p, l := range m.lines {
		if l == line && indexRE.ReplaceAllString(p, "") == key && (best == "" || p < best) {
			best = p
		}
	}
	if best == "" {
		return key
	}
	return best
}

var indexRE = regexp.MustCompile(`\[[0-9]+\]`)

// buildPosMap parses data on its own; it never fails: a document that does
// not parse gets a partial map, and the decoder reports the syntax error.
func buildPosMap(data []byte) *posMap {
	m := &posMap{lines: map[string]int{}, arrays: map[string]int{}, lineStarts: []int{0}}
	for i, b := range data {
		if b == '\n' {
			m.lineStarts = append(m.lineStarts, i+1)
		}
	}
	var p unstable.Parser
	p.Reset(data)
	cur := ""
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			keys, first := keyParts(e.Key())
			if len(keys) == 0 {
				continue
			}
			path := m.resolve(keys[:len(keys)-1])
			path = join(path, keys[len(keys)-1])
			if e.Kind == unstable.ArrayTable {
				n := m.arrays[path]
				m.arrays[path] = n + 1
				path = fmt.Sprintf("%s[%d]", path, n)
			} else if n := m.arrays[path]; n > 0 {
				path = fmt.Sprintf("%s[%d]", path, n-1)
			}
			if _, seen := m.lines[path]; !seen {
				m.lines[path] = m.lineOf(&p, first, 0)
			}
			cur = path
		case unstable.KeyValue:
			m.keyValue(&p, cur, e)
		}
	}
	return m
}

// resolve turns table key parts into a path, indexing into the latest
// element of every array of tables on the way.
func (m *posMap) resolve(keys []string) string {
	path := ""
	for _, k := range keys {
		path = join(path, k)
		if n := m.arrays[path]; n > 0 {
			path = fmt.Sprintf("%s[%d]", path, n-1)
		}
	}
	return path
}

func (m *posMap) keyValue(p *unstable.Parser, base string, kv *unstable.Node) {
	keys, first := keyParts(kv.Key())
	path := base
	for _, k := range keys {
		path = join(path, k)
	}
	line := m.lineOf(p, first, 0)
	m.lines[path] = line
	m.value(p, path, kv.Value(), line)
}

func (m *posMap) value(p *unstable.Parser, path string, v *unstable.Node, line int) {
	switch v.Kind {
	case unstable.InlineTable:
		it := v.Children()
		for it.Next() {
			if n := it.Node(); n.Kind == unstable.KeyValue {
				m.keyValue(p, path, n)
			}
		}
	case unstable.Array:
		it := v.Children()
		i := 0
		for it.Next() {
			n := it.Node()
			if n.Kind == unstable.Comment {
				continue
			}
			ep := fmt.Sprintf("%s[%d]", path, i)
			el := m.lineOf(p, n, line)
			m.lines[ep] = el
			m.value(p, ep, n, el)
			i++
		}
	}
}

func keyParts(it unstable.Iterator) ([]string, *unstable.Node) {
	var keys []string
	var first *unstable.Node
	for it.Next() {
		n := it.Node()
		if first == nil {
			first = n
		}
		keys = append(keys, string(n.Data))
	}
	return keys, first
}

// lineOf finds a node's line by binary search, since asking the parser
// rescans the document from the start for every key.
func (m *posMap) lineOf(p *unstable.Parser, n *unstable.Node, fallback int) int {
	if n == nil || n.Raw.Length == 0 && n.Raw.Offset == 0 {
		return fallback
	}
	off := int(n.Raw.Offset)
	if off+int(n.Raw.Length) > len(p.Data()) {
		return fallback
	}
	return sort.Search(len(m.lineStarts), func(i int) bool { return m.lineStarts[i] > off })
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "." + b
}
