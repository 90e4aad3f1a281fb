// AstralVessel patch test (see third_party/a2a-go/PATCHES.md).

package utils_test

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
	"github.com/a2aproject/a2a-go/v2/internal/utils"
)

// gobRoundTrip is the reference: what a fresh gob encoder and decoder give.
func gobRoundTrip[T any](v *T) (*T, error) {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(*v); err != nil {
		return nil, err
	}
	var c T
	if err := gob.NewDecoder(&buf).Decode(&c); err != nil {
		return nil, err
	}
	return &c, nil
}

// randGen builds varied tasks of the kinds the hand copy knows (known) or,
// with odd set, also values it must leave to gob.
type randGen struct {
	r   *rand.Rand
	odd bool
}

func (g *randGen) str() string {
	return []string{"", "a", "héllo", "x\x00y", "\xff\xfe"}[g.r.IntN(5)]
}

func (g *randGen) value(depth int) any {
	n := 9
	if depth > 3 {
		n = 5 // leaves only
	}
	if g.odd && g.r.IntN(12) == 0 {
		return []any{[]string{"x"}, map[string]string{"a": "b"}, struct{ A int }{1}, a2a.Text("t"), new(int), uint8(3)}[g.r.IntN(6)]
	}
	switch g.r.IntN(n) {
	case 0:
		return nil
	case 1:
		return g.str()
	case 2:
		return g.r.Float64() * 1e6
	case 3:
		return g.r.IntN(2) == 0
	case 4:
		return []any{int(7), int64(-3), float32(1.5), uint64(9), int32(4)}[g.r.IntN(5)]
	case 5:
		return map[string]any(nil)
	case 6:
		return []any{}
	case 7:
		m := map[string]any{}
		for range g.r.IntN(4) {
			m[g.str()+fmt.Sprint(g.r.IntN(3))] = g.value(depth + 1)
		}
		return m
	default:
		var s []any
		for range g.r.IntN(4) {
			s = append(s, g.value(depth+1))
		}
		return s
	}
}

func (g *randGen) meta() map[string]any {
	switch g.r.IntN(4) {
	case 0:
		return nil
	case 1:
		return map[string]any{}
	}
	m := map[string]any{}
	for range 1 + g.r.IntN(4) {
		m[g.str()+fmt.Sprint(g.r.IntN(5))] = g.value(0)
	}
	return m
}

func (g *randGen) strs() []string {
	switch g.r.IntN(3) {
	case 0:
		return nil
	case 1:
		return []string{}
	}
	return []string{g.str(), g.str()}
}

func (g *randGen) part() *a2a.Part {
	p := &a2a.Part{Filename: g.str(), MediaType: g.str(), Metadata: g.meta()}
	switch g.r.IntN(8) {
	case 0:
		p.Content = a2a.Text(g.str())
	case 1:
		p.Content = a2a.Raw(nil)
	case 2:
		p.Content = a2a.Raw{}
	case 3:
		p.Content = a2a.Raw([]byte{0, 1, 2, 255})
	case 4:
		p.Content = a2a.URL(g.str())
	case 5:
		p.Content = a2a.Data{Value: g.value(0)}
	case 6:
		p.Content = a2a.Data{}
	default:
		if g.odd && g.r.IntN(2) == 0 {
			t := a2a.Text("p")
			p.Content = &t // gob sends what it points to: not hand-copied
		}
	}
	return p
}

func (g *randGen) parts() a2a.ContentParts {
	switch g.r.IntN(4) {
	case 0:
		return nil
	case 1:
		return a2a.ContentParts{}
	}
	var ps a2a.ContentParts
	for range 1 + g.r.IntN(3) {
		if g.odd && g.r.IntN(20) == 0 {
			ps = append(ps, nil) // gob: "encodeArray: nil element"
			continue
		}
		ps = append(ps, g.part())
	}
	return ps
}

func (g *randGen) message() *a2a.Message {
	m := &a2a.Message{ID: g.str(), ContextID: g.str(), Extensions: g.strs(), Metadata: g.meta(), Parts: g.parts(),
		Role: a2a.MessageRoleAgent, TaskID: a2a.TaskID(g.str())}
	switch g.r.IntN(3) {
	case 0:
		m.ReferenceTasks = []a2a.TaskID{}
	case 1:
		m.ReferenceTasks = []a2a.TaskID{"t1", ""}
	}
	return m
}

func (g *randGen) task() *a2a.Task {
	t := &a2a.Task{ID: a2a.TaskID(g.str()), ContextID: g.str(), Metadata: g.meta(),
		Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}
	switch g.r.IntN(3) {
	case 0:
		t.History = []*a2a.Message{}
	case 1:
		for range 1 + g.r.IntN(3) {
			t.History = append(t.History, g.message())
		}
	}
	switch g.r.IntN(3) {
	case 0:
		t.Artifacts = []*a2a.Artifact{}
	case 1:
		for range 1 + g.r.IntN(3) {
			t.Artifacts = append(t.Artifacts, &a2a.Artifact{ID: a2a.ArtifactID(g.str()), Name: g.str(),
				Description: g.str(), Extensions: g.strs(), Metadata: g.meta(), Parts: g.parts()})
		}
	}
	if g.r.IntN(2) == 0 {
		t.Status.Message = g.message()
	}
	switch g.r.IntN(5) {
	case 0:
		ts := time.Now() // monotonic reading, Local
		t.Status.Timestamp = &ts
	case 1:
		ts := time.Date(2025, 3, 4, 5, 6, 7, 8, time.FixedZone("CET", 3600))
		t.Status.Timestamp = &ts
	case 2:
		ts := time.Time{}
		t.Status.Timestamp = &ts
	case 3:
		ts := time.Now().UTC()
		t.Status.Timestamp = &ts
	}
	return t
}

// table holds the cases worth naming; all of them are hand-copied.
func table() []*a2a.Task {
	zero := time.Time{}
	return []*a2a.Task{
		{},
		{History: []*a2a.Message{}, Artifacts: []*a2a.Artifact{}, Metadata: map[string]any{}},
		{History: []*a2a.Message{{}}, Artifacts: []*a2a.Artifact{{}}, Status: a2a.TaskStatus{Message: &a2a.Message{}, Timestamp: &zero}},
		{Metadata: map[string]any{"nil": nil, "empty": map[string]any{}, "nilmap": map[string]any(nil), "list": []any{},
			"nested": map[string]any{"a": []any{nil, map[string]any{}, []any{}, "", 0.0, false}}}},
		{Status: a2a.TaskStatus{Message: &a2a.Message{Parts: a2a.ContentParts{
			a2a.NewTextPart(""), a2a.NewRawPart(nil), a2a.NewRawPart([]byte{}), a2a.NewFileURLPart("", ""),
			a2a.NewDataPart(nil), a2a.NewDataPart(map[string]any{}), a2a.NewDataPart([]any{}), a2a.NewDataPart("s"),
			{Content: nil},
		}}}},
	}
}

// TestHandCopyEqualsGob: the hand copy gives what a gob round trip gives,
// for named cases and many random tasks; where it cannot (odd values),
// DeepCopy gives gob's result or gob's error; a mutated copy never changes
// the original.
func TestHandCopyEqualsGob(t *testing.T) {
	var tasks []*a2a.Task
	known := map[int]bool{}
	for _, tc := range table() {
		known[len(tasks)] = true
		tasks = append(tasks, tc)
	}
	g := &randGen{r: rand.New(rand.NewPCG(1, 2))}
	for range 2000 {
		known[len(tasks)] = true
		tasks = append(tasks, g.task())
	}
	g.odd = true
	for range 2000 {
		tasks = append(tasks, g.task())
	}
	hand, fallback := 0, 0
	for i, task := range tasks {
		want, wantErr := gobRoundTrip(task)
		hc, ok := utils.HandCopyForTest(task)
		if ok {
			hand++
			if wantErr != nil {
				t.Fatalf("task %d: hand copy made, gob fails: %v\n%#v", i, wantErr, task)
			}
			if !reflect.DeepEqual(hc, want) {
				t.Fatalf("task %d: hand copy differs from gob\nhand %#v\ngob  %#v", i, hc, want)
			}
		} else {
			fallback++
			if known[i] {
				t.Fatalf("task %d: not hand-copied: %#v", i, task)
			}
		}
		got, err := utils.DeepCopy(task)
		if (err != nil) != (wantErr != nil) || !reflect.DeepEqual(got, want) {
			t.Fatalf("task %d: DeepCopy %v, gob %v", i, err, wantErr)
		}
		if err != nil {
			continue
		}
		mutate(reflect.ValueOf(got))
		after, _ := gobRoundTrip(task)
		if !reflect.DeepEqual(after, want) {
			t.Fatalf("task %d: mutating the copy changed the original", i)
		}
		// StoredTask and Artifact go the same way.
		st := &taskstore.StoredTask{Task: task, Version: 3, User: "u"}
		wantST, _ := gobRoundTrip(st)
		if gotST, err := utils.DeepCopy(st); err != nil || !reflect.DeepEqual(gotST, wantST) {
			t.Fatalf("task %d: StoredTask copy %v", i, err)
		}
		for _, a := range task.Artifacts {
			wantA, _ := gobRoundTrip(a)
			if gotA, err := utils.DeepCopy(a); err != nil || !reflect.DeepEqual(gotA, wantA) {
				t.Fatalf("task %d: Artifact copy %v", i, err)
			}
		}
	}
	if hand < 2000 || fallback < 100 {
		t.Fatalf("hand %d, fallback %d: the generator does not cover both", hand, fallback)
	}
	t.Logf("hand-copied %d, left to gob %d", hand, fallback)
}

// TestHandCopyFields fails when upstream adds a field to a type the hand
// copy copies: the copy must then learn it.
func TestHandCopyFields(t *testing.T) {
	for typ, n := range map[reflect.Type]int{
		reflect.TypeFor[a2a.Task](): 6, reflect.TypeFor[a2a.TaskStatus](): 3, reflect.TypeFor[a2a.Message](): 8,
		reflect.TypeFor[a2a.Artifact](): 6, reflect.TypeFor[a2a.Part](): 4, reflect.TypeFor[a2a.Data](): 1,
		reflect.TypeFor[taskstore.StoredTask](): 3,
	} {
		if typ.NumField() != n {
			t.Errorf("%s has %d fields, the hand copy knows %d (internal/utils/taskcopy.go)", typ, typ.NumField(), n)
		}
	}
}

// mutate changes every string, byte, map and slice element reachable from v.
func mutate(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return
		}
		e := v.Elem()
		if v.Kind() == reflect.Interface && v.CanSet() {
			if e.Kind() == reflect.String { // Text, URL or a string value
				v.Set(reflect.ValueOf("mutated").Convert(e.Type()))
				return
			}
			if v.Type() == reflect.TypeFor[any]() && e.Kind() != reflect.Map && e.Kind() != reflect.Slice {
				v.Set(reflect.ValueOf("mutated"))
				return
			}
		}
		mutate(e)
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			if v.CanSet() {
				v.Set(reflect.ValueOf(time.Unix(1, 0)))
			}
			return
		}
		for i := range v.NumField() {
			mutate(v.Field(i))
		}
	case reflect.Slice:
		for i := range v.Len() {
			if v.Type().Elem().Kind() == reflect.Uint8 {
				v.Index(i).SetUint(v.Index(i).Uint() ^ 0xff)
				continue
			}
			mutate(v.Index(i))
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			e := v.MapIndex(k)
			if e.Kind() == reflect.Interface && !e.IsNil() && (e.Elem().Kind() == reflect.Map || e.Elem().Kind() == reflect.Slice) {
				mutate(e.Elem())
			}
			v.SetMapIndex(k, reflect.ValueOf("mutated"))
		}
		if !v.IsNil() && v.Type().Key().Kind() == reflect.String && v.Type().Elem().Kind() == reflect.Interface {
			v.SetMapIndex(reflect.ValueOf("added"), reflect.ValueOf(any(1.0)))
		}
	case reflect.String:
		if v.CanSet() {
			v.SetString(v.String() + "!")
		}
	}
}
