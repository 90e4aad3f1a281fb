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

// Package utils provides general utility functions for A2A.
package utils

import (
	"bytes"
	"context"
	"encoding/gob"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"

	"github.com/a2aproject/a2a-go/v2/log"
)

// Ptr returns a pointer to the argument simplifying pointer to primitive literals creation.
func Ptr[T any](v T) *T {
	return &v
}

// DeepCopy uses gob encode-decode pass to create a deep-copy of the referenced data.
//
// AstralVessel patch (see third_party/a2a-go/PATCHES.md): the encoder and
// decoder are kept, as a pair joined by one buffer, in a pool per type, so
// each type's description is compiled, sent and read once per pair rather
// than on every copy. The task manager copies the task about twice per
// event; with a fresh encoder and decoder each time, compiling type
// descriptions was a third of the copy's cost.
//
// AstralVessel patch: a2a.Task, a2a.Artifact and types registered with
// RegisterHandCopy are copied by hand (taskcopy.go) when the hand copy
// gives exactly what gob gives, and with gob otherwise.
func DeepCopy[T any](task *T) (*T, error) {
	if c, ok := handCopy(task); ok {
		return c.(*T), nil
	}
	return gobCopy(task)
}

// gobCopy is the gob round trip of DeepCopy.
func gobCopy[T any](task *T) (*T, error) {
	pool := copierPool[T]()
	c := pool.Get().(*copier)
	if err := c.enc.Encode(*task); err != nil {
		return nil, err // the pair's stream state is unknown: not reused
	}
	var copy T
	if err := c.dec.Decode(&copy); err != nil {
		return nil, err
	}
	if c.buf.Len() == 0 && c.buf.Cap() <= maxPooledBuffer {
		pool.Put(c)
	}
	return &copy, nil
}

// maxPooledBuffer bounds the buffer a pooled pair keeps between copies.
const maxPooledBuffer = 1 << 20

// copier is a gob encoder and the decoder reading what it writes. The
// decoder remembers the type descriptions the encoder sent once, so a
// pair only ever copies whole values and must be dropped after an error.
type copier struct {
	buf bytes.Buffer
	enc *gob.Encoder
	dec *gob.Decoder
}

var copierPools sync.Map // reflect.Type -> *sync.Pool of *copier

func copierPool[T any]() *sync.Pool {
	t := reflect.TypeFor[T]()
	if p, ok := copierPools.Load(t); ok {
		return p.(*sync.Pool)
	}
	p, _ := copierPools.LoadOrStore(t, &sync.Pool{New: func() any {
		c := &copier{}
		c.enc = gob.NewEncoder(&c.buf)
		c.dec = gob.NewDecoder(&c.buf) // bytes.Buffer is an io.ByteReader: the decoder reads no further than one value
		return c
	}})
	return p.(*sync.Pool)
}

// ToStringMap converts a map[string]any to a map[string]string.
// It logs a warning if a value cannot be converted to a string.
func ToStringMap(raw any) (map[string]string, bool) {
	if m, ok := raw.(map[string]string); ok {
		return m, true
	} else if m, ok := raw.(map[string]any); ok {
		converted := make(map[string]string)
		for k, v := range m {
			if s, ok := v.(string); ok {
				converted[k] = s
			} else {
				log.Warn(context.Background(), "failed to convert metadata value to string", "key", k, "value", v)
			}
		}
		return converted, true
	}
	return nil, false
}

// ToMapStruct converts an any struct to map[string]any using json roundtrip.
func ToMapStruct(value any) (map[string]any, error) {
	raw, err := json.Marshal(value)
	if err != nil {
		return nil, err
	}
	var r map[string]any
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, err
	}
	return r, nil
}

// FromMapStruct converts map[string]any to a typed value using json roundtrip.
func FromMapStruct[T any](value map[string]any) (*T, error) {
	raw, err := json.Marshal(value)
	if err != nil {
		return nil, err
	}
	var zero T
	if err := json.Unmarshal(raw, &zero); err != nil {
		return nil, err
	}
	return &zero, nil
}

// MustPrettyPrint is a debugging utility that prints indented JSON represenation of a value.
func MustPrettyPrint(value any) {
	raw, err := json.MarshalIndent(value, "", " ")
	if err != nil {
		panic(err.Error())
	}
	fmt.Println(string(raw))
}
