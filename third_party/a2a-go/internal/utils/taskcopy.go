// Copyright 2025 The A2A Authors
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

package utils

// AstralVessel patch (see third_party/a2a-go/PATCHES.md): a hand-written
// deep copy of a2a.Task and a2a.Artifact that gives exactly what the gob
// round trip of DeepCopy gives, about ten times faster. Where it meets
// something it does not know (a metadata value of another type, a part
// content of another type, a nil element gob refuses, a timestamp gob
// cannot encode) it reports so and DeepCopy copies with gob.
//
// What gob gives, and so the hand copy:
//   - in a struct field, an empty slice (nil or not) becomes nil, a map
//     stays nil or empty (gob leaves out only a nil map); a nil pointer
//     stays nil, a pointer to a zero struct stays a pointer
//     to a zero struct; a nil element in a slice of pointers is an error;
//   - a value held in an interface (metadata values, the content of a part,
//     a data part's value) keeps its type; there a map[string]any, nil or
//     empty, becomes an empty map, a []any or Raw that is empty becomes nil
//     of its type, "" stays "", a nil element or map value stays nil;
//   - a timestamp goes through MarshalBinary: no monotonic reading, UTC,
//     Local or an unnamed fixed zone.

import (
	"encoding/gob"
	"reflect"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

func init() {
	// The hand copy copies these metadata values, so gob must know them too,
	// whichever package the copy is used from (taskstore registers them as
	// well, under the same names).
	gob.Register(map[string]any{})
	gob.Register([]any{})
}

// handCopy returns the hand-made copy of v when v is of a type with one
// and the copy knows everything v holds.
func handCopy(v any) (any, bool) {
	switch v := v.(type) {
	case *a2a.Task:
		return CopyTask(v)
	case *a2a.Artifact:
		return copyArtifact(v)
	}
	if fn, ok := handCopiers.Load(reflect.TypeOf(v)); ok {
		return fn.(func(any) (any, bool))(v)
	}
	return nil, false
}

var handCopiers sync.Map // reflect.Type of *T -> func(any) (any, bool)

// RegisterHandCopy adds a hand-made copy for *T to DeepCopy. fn returns
// false when it cannot give what gob gives; DeepCopy then uses gob.
func RegisterHandCopy[T any](fn func(*T) (*T, bool)) {
	handCopiers.Store(reflect.TypeFor[*T](), func(v any) (any, bool) {
		c, ok := fn(v.(*T))
		if !ok {
			return nil, false
		}
		return c, true
	})
}

// CopyTask is the hand-made copy of t, as a top-level value or as the
// target of a non-nil pointer field (the same in gob). It reports false
// when it cannot give what gob gives.
func CopyTask(t *a2a.Task) (*a2a.Task, bool) {
	c := &a2a.Task{ID: t.ID, ContextID: t.ContextID}
	var ok bool
	if c.Artifacts, ok = copyPtrSlice(t.Artifacts, copyArtifact); !ok {
		return nil, false
	}
	if c.History, ok = copyPtrSlice(t.History, copyMessage); !ok {
		return nil, false
	}
	if c.Metadata, ok = copyMetaField(t.Metadata); !ok {
		return nil, false
	}
	if c.Status, ok = copyStatus(t.Status); !ok {
		return nil, false
	}
	return c, true
}

func copyStatus(s a2a.TaskStatus) (a2a.TaskStatus, bool) {
	c := a2a.TaskStatus{State: s.State}
	if s.Message != nil {
		m, ok := copyMessage(s.Message)
		if !ok {
			return c, false
		}
		c.Message = m
	}
	if s.Timestamp != nil {
		b, err := s.Timestamp.MarshalBinary() // what gob sends (time.Time.GobEncode)
		if err != nil {
			return c, false
		}
		ts := new(time.Time)
		if err := ts.UnmarshalBinary(b); err != nil {
			return c, false
		}
		c.Timestamp = ts
	}
	return c, true
}

func copyMessage(m *a2a.Message) (*a2a.Message, bool) {
	c := &a2a.Message{ID: m.ID, ContextID: m.ContextID, Role: m.Role, TaskID: m.TaskID}
	c.Extensions = copyValueSlice(m.Extensions)
	c.ReferenceTasks = copyValueSlice(m.ReferenceTasks)
	var ok bool
	if c.Metadata, ok = copyMetaField(m.Metadata); !ok {
		return nil, false
	}
	if c.Parts, ok = copyPtrSlice(m.Parts, copyPart); !ok {
		return nil, false
	}
	return c, true
}

func copyArtifact(a *a2a.Artifact) (*a2a.Artifact, bool) {
	c := &a2a.Artifact{ID: a.ID, Description: a.Description, Name: a.Name}
	c.Extensions = copyValueSlice(a.Extensions)
	var ok bool
	if c.Metadata, ok = copyMetaField(a.Metadata); !ok {
		return nil, false
	}
	if c.Parts, ok = copyPtrSlice(a.Parts, copyPart); !ok {
		return nil, false
	}
	return c, true
}

func copyPart(p *a2a.Part) (*a2a.Part, bool) {
	c := &a2a.Part{Filename: p.Filename, MediaType: p.MediaType}
	switch v := p.Content.(type) {
	case nil:
	case a2a.Text:
		c.Content = v
	case a2a.URL:
		c.Content = v
	case a2a.Raw:
		c.Content = a2a.Raw(copyValueSlice(v))
	case a2a.Data:
		var d a2a.Data
		if v.Value != nil { // a nil interface field is not sent
			val, ok := copyInInterface(v.Value, 0)
			if !ok {
				return nil, false
			}
			d.Value = val
		}
		c.Content = d
	default: // e.g. *a2a.Text: gob sends what it points to
		return nil, false
	}
	var ok bool
	if c.Metadata, ok = copyMetaField(p.Metadata); !ok {
		return nil, false
	}
	return c, true
}

// copyPtrSlice copies a slice field of pointers: empty is nil, a nil
// element is what gob refuses.
func copyPtrSlice[E any, S ~[]*E](s S, copyElem func(*E) (*E, bool)) (S, bool) {
	if len(s) == 0 {
		return nil, true
	}
	c := make(S, len(s))
	for i, e := range s {
		if e == nil {
			return nil, false
		}
		ce, ok := copyElem(e)
		if !ok {
			return nil, false
		}
		c[i] = ce
	}
	return c, true
}

// copyValueSlice copies a slice of immutable values; empty is nil.
func copyValueSlice[E any, S ~[]E](s S) S {
	if len(s) == 0 {
		return nil
	}
	return append(S(nil), s...)
}

// copyMetaField copies a metadata map in a struct field: nil stays nil,
// empty stays empty (gob leaves out a nil map field, not an empty one).
func copyMetaField(m map[string]any) (map[string]any, bool) {
	if m == nil {
		return nil, true
	}
	return copyMap(m, 0)
}

// maxHandDepth bounds the nesting the hand copy follows; deeper values
// (or a map holding itself) are left to gob.
const maxHandDepth = 64

func copyMap(m map[string]any, depth int) (map[string]any, bool) {
	c := make(map[string]any, len(m))
	for k, v := range m {
		cv, ok := copyInInterface(v, depth+1)
		if !ok {
			return nil, false
		}
		c[k] = cv
	}
	return c, true
}

// copyInInterface copies a value held in an interface (a metadata value,
// an element of a []any, a data part's value) as gob does, for the JSON
// value types and immutable basic types; false for any other type.
func copyInInterface(v any, depth int) (any, bool) {
	if depth > maxHandDepth {
		return nil, false
	}
	switch v := v.(type) {
	case nil:
		return nil, true
	case string, bool, float64, float32, int, int8, int16, int32, int64, uint, uint16, uint32, uint64:
		return v, true
	case map[string]any: // nil or empty: an empty map
		return copyMap(v, depth)
	case []any:
		if len(v) == 0 {
			return []any(nil), true
		}
		c := make([]any, len(v))
		for i, e := range v {
			ce, ok := copyInInterface(e, depth+1)
			if !ok {
				return nil, false
			}
			c[i] = ce
		}
		return c, true
	}
	return nil, false
}
