package spec

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"

	toml "github.com/pelletier/go-toml/v2"
)

// Error is one problem found in a configuration file. Its text reads
// "file:line: field: message" so editors and terminals can jump to it.
type Error struct {
	File  string // the file as named to the loader
	Line  int    // 1-based; 0 when the problem is not tied to a line
	Field string // dotted key path, e.g. agents[0].sandbox.scratch
	Msg   string // what is wrong and what is allowed
}

func (e *Error) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	if e.Field == "" {
		return loc + ": " + e.Msg
	}
	return loc + ": " + e.Field + ": " + e.Msg
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

// decodeStrict decodes data into v, rejecting unknown keys, and turns
// go-toml's errors into *Error values that name the file, line and field.
func decodeStrict(file string, data []byte, v any) error {
	dec := toml.NewDecoder(strings.NewReader(string(data))).DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		return nil
	}
	pos := buildPosMap(data)
	var strict *toml.StrictMissingError
	if errors.As(err, &strict) {
		var out Errors
		for i := range strict.Errors {
			de := &strict.Errors[i]
			row, _ := de.Position()
			key := []string(de.Key())
			field := pos.indexed(row, strings.Join(key, "."))
			msg := "unknown key"
			if allowed := allowedKeys(reflect.TypeOf(v), key[:max(len(key)-1, 0)]); allowed != "" {
				msg += "; allowed here: " + allowed
			}
			out = append(out, &Error{File: file, Line: row, Field: field, Msg: msg})
		}
		return out
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		row, _ := de.Position()
		key := []string(de.Key())
		msg := strings.TrimPrefix(de.Error(), "toml: ")
		if m := mismatchRE.FindStringSubmatch(msg); m != nil {
			msg = "got a TOML " + m[1] // the rest names Go types, not TOML ones
		}
		if want := describeType(reflect.TypeOf(v), key); want != "" && !strings.Contains(msg, "invalid size") {
			msg += "; expected " + want
		}
		return Errors{{File: file, Line: row, Field: pos.indexed(row, strings.Join(key, ".")), Msg: msg}}
	}
	// Errors from a field's own decoder (ByteSize) arrive without a position.
	return Errors{{File: file, Msg: strings.TrimPrefix(err.Error(), "toml: ")}}
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
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := strings.Split(f.Tag.Get("toml"), ",")[0]
		if tag == name {
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
	for i := 0; i < t.NumField(); i++ {
		tag := strings.Split(t.Field(i).Tag.Get("toml"), ",")[0]
		if tag != "" && tag != "-" {
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
