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

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type pooledNested struct {
	Tags []string
	Meta map[string]any
}

type pooledValue struct {
	ID     string
	Count  int
	Nested *pooledNested
	Items  []pooledNested
}

type pooledUnencodable struct {
	Fn func()
}

func newPooledValue(i int) *pooledValue {
	return &pooledValue{
		ID:     fmt.Sprintf("v-%d", i),
		Count:  i,
		Nested: &pooledNested{Tags: []string{"a", "b"}, Meta: map[string]any{"k": "v", "n": float64(i)}},
		Items:  []pooledNested{{Tags: []string{"x"}}, {Meta: map[string]any{"i": float64(i), "s": "x"}}},
	}
}

func TestDeepCopyPooled(t *testing.T) {
	t.Parallel()
	for i := range 100 {
		original := newPooledValue(i)
		got, err := DeepCopy(original)
		if err != nil {
			t.Fatalf("DeepCopy() error = %v", err)
		}
		if diff := cmp.Diff(original, got); diff != "" {
			t.Fatalf("DeepCopy() copy %d differs (-want,+got)\n%s", i, diff)
		}
		got.Nested.Tags[0] = "changed"
		got.Nested.Meta["k"] = "changed"
		got.Items[1].Meta["i"] = "changed"
		if diff := cmp.Diff(newPooledValue(i), original); diff != "" {
			t.Fatalf("DeepCopy() copy %d shares memory with the original (-want,+got)\n%s", i, diff)
		}
	}
}

func TestDeepCopyPooledAfterError(t *testing.T) {
	t.Parallel()
	if _, err := DeepCopy(&pooledUnencodable{Fn: func() {}}); err == nil {
		t.Fatal("DeepCopy() of a func field error = nil, want an error")
	}
	// A value gob cannot encode part way through (a nil element in a slice of
	// pointers) must not leave a pair with half a value in its stream.
	type withPointers struct{ P []*pooledNested }
	if _, err := DeepCopy(&withPointers{P: []*pooledNested{{}, nil}}); err == nil {
		t.Fatal("DeepCopy() of a nil slice element error = nil, want an error")
	}
	for i := range 10 {
		v := &withPointers{P: []*pooledNested{{Tags: []string{fmt.Sprint(i)}}}}
		got, err := DeepCopy(v)
		if err != nil {
			t.Fatalf("DeepCopy() after a failed copy error = %v", err)
		}
		if diff := cmp.Diff(v, got); diff != "" {
			t.Fatalf("DeepCopy() after a failed copy differs (-want,+got)\n%s", diff)
		}
	}
}

func TestDeepCopyPooledLargeAndConcurrent(t *testing.T) {
	t.Parallel()
	large := &pooledValue{ID: strings.Repeat("x", 2<<20)}
	if got, err := DeepCopy(large); err != nil || got.ID != large.ID {
		t.Fatalf("DeepCopy() of a large value = %d bytes, %v", len(got.ID), err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				original := newPooledValue(g*1000 + i)
				got, err := DeepCopy(original)
				if err != nil {
					errs <- err
					return
				}
				if diff := cmp.Diff(original, got); diff != "" {
					errs <- fmt.Errorf("copy differs (-want,+got)\n%s", diff)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("DeepCopy() concurrently: %v", err)
	}
}
