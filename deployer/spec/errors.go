package spec

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	toml "github.com/pelletier/go-toml/v2"

	"github.com/astraldeep/astralvessel-go/runtime/issuers"
)

// Error is one problem found in a configuration file. Its text reads
// "file:line: field: message" so editors and terminals can jump to it.
type Error struct {
	File  string // the file as named to the loader
	Line  int    // 1-based; 0 when the problem is not tied to a line
	Col   int    // 1-based column of a syntax error; 0 otherwise
	Field string // dotted key path, e.g. agents[0].sandbox.scratch
	// Label is Field as printed: array elements with a valid id are named by
	// it (agents[field-guide].sandbox.scratch); empty means Field.
	Label string
	Msg   string // what is wrong and what is allowed
}

func (e *Error) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d", e.File, e.Line)
		if e.Col > 0 {
			loc += fmt.Sprintf(":%d", e.Col)
		}
	}
	field := e.Field
	if e.Label != "" {
		field = e.Label
	}
	if field == "" {
		return loc + ": " + e.Msg
	}
	return loc + ": " + field + ": " + e.Msg
}

// sortErrors orders errors by file (in the order the files first appear)
// and line, keeping the order of errors on the same line.
func sortErrors(es Errors) {
	rank := map[string]int{}
	for _, e := range es {
		if _, ok := rank[e.File]; !ok {
			rank[e.File] = len(rank)
		}
	}
	sort.SliceStable(es, func(i, j int) bool {
		if a, b := rank[es[i].File], rank[es[j].File]; a != b {
			return a < b
		}
		return es[i].Line < es[j].Line
	})
}

// labelByID names elements of the arrays of tables by their id in the
// errors of file: agents[1].package becomes agents[field-guide].package.
// Elements without a valid id (or with a duplicate one) keep their index.
func labelByID(es Errors, file string, arrays map[string][]string) {
	badID := map[string]bool{} // "agents[1]" when that element's id is in error
	for _, e := range es {
		if p, ok := strings.CutSuffix(e.Field, ".id"); ok && e.File == file {
			badID[p] = true
		}
	}
	for _, e := range es {
		if e.File != file || e.Label != "" {
			continue
		}
		for name, ids := range arrays {
			rest, ok := strings.CutPrefix(e.Field, name+"[")
			if !ok {
				continue
			}
			n, tail, ok := strings.Cut(rest, "]")
			if !ok {
				continue
			}
			i, err := strconv.Atoi(n)
			if err != nil || i < 0 || i >= len(ids) || badID[name+"["+n+"]"] || !issuers.ValidID(ids[i]) ||
				slices.Index(ids, ids[i]) != i || slices.Index(ids[i+1:], ids[i]) >= 0 {
				continue
			}
			e.Label = name + "[" + ids[i] + "]" + tail
		}
	}
}

// Errors is every problem found in one load, in file order.
type Errors []*Error

func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap lets errors.As find each *Error.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// collector gathers problems for one file, placing each on a line through
// the file's position map.
type collector struct {
	file string
	pos  *posMap
	errs *Errors // shared across the files of one load
}

func (c *collector) add(field, format string, args ...any) {
	*c.errs = append(*c.errs, &Error{File: c.file, Line: c.pos.line(field), Field: field, Msg: fmt.Sprintf(format, args...)})
}

// maxDecodeErrors bounds how many type errors one file reports.
const maxDecodeErrors = 50

// decodeStrict decodes data into v, rejecting unknown keys, and turns
// go-toml's errors into *Error values that name the file, line and field.
// It reports every unknown key and every value of the wrong type, not just
// the first: after a type error it decodes again without that line. ok says
// whether v was decoded (every key but the ones reported), so that
// validation can go on and find the other problems; a syntax error stops
// the file (ok false).
func decodeStrict(file string, data []byte, v any) (errs Errors, ok bool) {
	pos := buildPosMap(data)
	doc := data
	for range maxDecodeErrors {
		reset(v)
		err := toml.NewDecoder(strings.NewReader(string(doc))).DisallowUnknownFields().Decode(v)
		if err == nil {
			return errs, true
		}
		var strict *toml.StrictMissingError
		if errors.As(err, &strict) {
			for i := range strict.Errors {
				de := &strict.Errors[i]
				row, _ := de.Position()
				key := []string(de.Key())
				field := pos.indexed(row, strings.Join(key, "."))
				msg := "unknown key"
				if allowed := allowedKeys(reflect.TypeOf(v), key[:max(len(key)-1, 0)]); allowed != "" {
					msg += "; allowed here: " + allowed
				}
				errs = append(errs, &Error{File: file, Line: row, Field: field, Msg: msg})
			}
			return errs, true // the rest of the document was decoded
		}
		var de *toml.DecodeError
		if !errors.As(err, &de) {
			// Errors from a field's own decoder (ByteSize) arrive without a position.
			return append(errs, &Error{File: file, Msg: strings.TrimPrefix(err.Error(), "toml: ")}), false
		}
		row, col := de.Position()
		key := []string(de.Key())
		msg := strings.TrimPrefix(de.Error(), "toml: ")
		if len(key) == 0 {
			if len(errs) > 0 {
				// Removing a bad line broke the syntax (a value over several
				// lines): what was found is all there is to say.
				return errs, false
			}
			return Errors{{File: file, Line: row, Col: col, Msg: msg}}, false
		}
		if m := mismatchRE.FindStringSubmatch(msg); m != nil {
			msg = "got a TOML " + m[1] // the rest names Go types, not TOML ones
		}
		if want := describeType(reflect.TypeOf(v), key); want != "" && !strings.Contains(msg, "invalid size") {
			msg += "; expected " + want
		}
		errs = append(errs, &Error{File: file, Line: row, Field: pos.indexed(row, strings.Join(key, ".")), Msg: msg})
		next, cut := blankLine(doc, row)
		if !cut {
			return errs, false
		}
		doc = next
	}
	return errs, false
}

// reset sets the value v points to back to its zero value.
func reset(v any) {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer && !rv.IsNil() {
		rv.Elem().SetZero()
	}
}

// blankLine empties line row (1-based) of doc, keeping the line count.
func blankLine(doc []byte, row int) ([]byte, bool) {
	lines := strings.SplitAfter(string(doc), "\n")
	if row < 1 || row > len(lines) || strings.TrimSpace(lines[row-1]) == "" {
		return nil, false
	}
	end := ""
	if strings.HasSuffix(lines[row-1], "\n") {
		end = "\n"
	}
	lines[row-1] = end
	return []byte(strings.Join(lines, "")), true
}

// dropUnder removes the errors that follow from a decoding error: a value
// of the wrong type was left out, so validation may find it missing (the
// field itself or anything under it) or compare a sibling with its zero
// value (an error in the same table naming it, like "at most scratch").
func dropUnder(es Errors, decoded Errors) Errors {
	if len(decoded) == 0 {
		return es
	}
	var out Errors
	for _, e := range es {
		skip := false
		for _, d := range decoded {
			if d.Field == "" || e.File != d.File {
				continue
			}
			under := e.Field == d.Field || strings.HasPrefix(e.Field, d.Field+".") || strings.HasPrefix(e.Field, d.Field+"[")
			parent, name := "", d.Field
			if i := strings.LastIndexByte(d.Field, '.'); i >= 0 {
				parent, name = d.Field[:i], d.Field[i+1:]
			}
			sibling := strings.HasPrefix(e.Field, parent) && !strings.Contains(strings.TrimPrefix(e.Field, parent+"."), ".") &&
				strings.Contains(e.Msg, name)
			if under || sibling {
				skip = true
				break
			}
		}
		if !skip {
			out = append(out, e)
		}
	}
	return out
}

var mismatchRE = regexp.MustCompile(`^cannot (?:decode|store) TOML ([a-z -]+?) (?:into|in)\b`)

// fieldType follows a TOML key path through Go struct types.
func fieldType(t reflect.Type, key []string) reflect.Type {
	for _, k := range key {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		switch t.Kind() {
		case reflect.Struct:
			f, ok := tomlField(t, k)
			if !ok {
				return nil
			}
			t = f.Type
		case reflect.Map:
			t = t.Elem()
		default:
			return nil
		}
	}
	return t
}

func tomlField(t reflect.Type, name string) (reflect.StructField, bool) {
	// VisibleFields: the keys of an embedded struct (Model's
	// RequestSettings) are the table's own.
	for _, f := range reflect.VisibleFields(t) {
		tag := strings.Split(f.Tag.Get("toml"), ",")[0]
		if !f.Anonymous && tag == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// allowedKeys lists the keys a table at the given path accepts.
func allowedKeys(root reflect.Type, table []string) string {
	t := fieldType(root, table)
	if t == nil {
		return ""
	}
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return ""
	}
	var keys []string
	for _, f := range reflect.VisibleFields(t) {
		tag := strings.Split(f.Tag.Get("toml"), ",")[0]
		if !f.Anonymous && tag != "" && tag != "-" {
			keys = append(keys, tag)
		}
	}
	sort.Strings(keys)
	return strings.Join(keys, ", ")
}

var byteSizeType = reflect.TypeOf(ByteSize(0))

// describeType says in words what a key's value must be.
func describeType(root reflect.Type, key []string) string {
	t := fieldType(root, key)
	if t == nil {
		return ""
	}
	return describe(t)
}

func describe(t reflect.Type) string {
	if t == byteSizeType {
		return `a size: an integer number of bytes or a string such as "512MB" or "1GiB"`
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "an integer"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Struct {
			return "an array of tables"
		}
		return "an array of " + plural(describe(t.Elem()))
	case reflect.Map:
		if t.Elem().Kind() == reflect.String {
			return "a table of strings"
		}
		return "a table"
	case reflect.Struct:
		return "a table"
	}
	return ""
}

func plural(s string) string {
	switch s {
	case "a string":
		return "strings"
	case "an integer":
		return "integers"
	case "true or false":
		return "booleans"
	}
	return "values"
}
