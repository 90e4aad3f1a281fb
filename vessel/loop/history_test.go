package loop

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/astraldeep/astralvessel-go/vessel/model"
	"github.com/astraldeep/astralvessel-go/vessel/transcript"
)

// firstCallModel answers at once and keeps a copy of the messages it was sent.
type firstCallModel struct {
	sent  []transcript.Message
	first *transcript.Message
}

func (m *firstCallModel) Complete(_ context.Context, req *model.Request, _ model.Handler) (*model.Response, error) {
	m.sent = slices.Clone(req.Messages)
	m.first = &req.Messages[0]
	return &model.Response{Content: "a"}, nil
}

// TestHistoryListReused: a history list with room becomes the turn's list
// (the model is sent it, not a copy); one without room is copied. The
// model is sent the same messages either way.
func TestHistoryListReused(t *testing.T) {
	var hist []transcript.Message
	for i := range 50 {
		hist = append(hist, transcript.Message{Role: []string{"user", "assistant"}[i%2], Content: transcript.Text(fmt.Sprint("m", i))})
	}
	want := append([]transcript.Message{{Role: "system", Content: transcript.Text("p")}}, hist...)
	want = append(want, transcript.Message{Role: "user", Content: transcript.Text("q")})
	seen := map[bool]bool{}
	for _, room := range []int{0, transcript.SpareMessages - 1, transcript.SpareMessages, 100} {
		in := slices.Grow(slices.Clone(hist), room)
		m := &firstCallModel{}
		cfg := &Config{Model: m, Prompt: func() (string, error) { return "p", nil }, CoalesceDelay: time.Hour}
		input := &Input{Text: "q", History: in}
		res := Run(context.Background(), cfg, input, func(Event) bool { return true })
		if res.Status != StatusOK || input.History != nil {
			t.Fatalf("room %d: %+v", room, res)
		}
		if !reflect.DeepEqual(m.sent, want) {
			t.Fatalf("room %d: sent %+v", room, m.sent)
		}
		reused := m.first == &in[:1][0]
		if reused != (cap(in)-len(in) >= transcript.SpareMessages) {
			t.Fatalf("room %d (cap %d): list reused %v", room, cap(in)-len(in), reused)
		}
		seen[reused] = true
	}
	if !seen[true] || !seen[false] {
		t.Fatalf("only reused=%v was tried", seen)
	}
}
