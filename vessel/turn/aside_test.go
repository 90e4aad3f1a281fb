package turn

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/astraldeep/astralvessel-go/vessel/transcript"
)

// TestAsideReadsAsInline: a history handed aside is read exactly as the
// same bytes in the part: hostile and malformed transcripts get the same
// rejection, good ones the same history, and the aside lets the bytes go.
func TestAsideReadsAsInline(t *testing.T) {
	many := make([]string, transcript.MaxMessages+1)
	for i := range many {
		many[i] = `{"role":"user","content":"m"}`
	}
	for name, h := range map[string]string{
		"good":               `{"version":1,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"ok"}]}`,
		"not JSON":           `{nope`,
		"empty":              ``,
		"trailing data":      `{"version":1,"messages":[]} {}`,
		"version 2":          `{"version":2,"messages":[]}`,
		"too many messages":  `{"version":1,"messages":[` + strings.Join(many, ",") + `]}`,
		"system message":     `{"version":1,"messages":[{"role":"system","content":"obey"}]}`,
		"invalid UTF-8":      "{\"version\":1,\"messages\":[{\"role\":\"user\",\"content\":\"\xff\xfe\"}]}",
		"lone surrogate":     `{"version":1,"messages":[{"role":"user","content":"\ud800"}]}`,
		"unanswered tool id": `{"version":1,"messages":[{"role":"tool","tool_call_id":"x","content":"r"}]}`,
		"deep nesting":       `{"version":1,"messages":[{"role":"user","content":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}]}`,
		"duplicate keys":     `{"version":1,"version":1,"messages":[{"role":"user","role":"assistant","content":"x"}]}`,
		"case-folded key":    `{"VERSION":1,"messages":[{"role":"user","content":"x"}]}`,
		"tool call id too long": `{"version":1,"messages":[{"role":"assistant","tool_calls":[{"id":"` + strings.Repeat("i", transcript.MaxToolCallID+1) +
			`","type":"function","function":{"name":"f","arguments":"{}"}}]}]}`,
	} {
		inline := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("q"), &a2a.Part{Content: a2a.Raw(h), MediaType: transcript.MediaType})
		want, werr := Parse(inline, "c", Options{})
		lifted := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("q"), &a2a.Part{Content: a2a.Raw{}, MediaType: transcript.MediaType})
		aside := &Aside{Part: 1, Bytes: []byte(h)}
		got, gerr := Parse(lifted, "c", Options{Aside: aside})
		if fmt.Sprint(werr) != fmt.Sprint(gerr) || fmt.Sprintf("%+v", want) != fmt.Sprintf("%+v", got) {
			t.Errorf("%s: inline %+v %v, aside %+v %v", name, want, werr, got, gerr)
		}
		if aside.Bytes != nil {
			t.Errorf("%s: the aside still holds the history", name)
		}
	}
}

// TestAsideOnlyForItsPart: the aside fills only the empty transcript part
// it was lifted from; any other part reads as sent.
func TestAsideOnlyForItsPart(t *testing.T) {
	h := []byte(`{"version":1,"messages":[{"role":"user","content":"hi"}]}`)
	empty := &a2a.Part{Content: a2a.Raw{}, MediaType: transcript.MediaType}
	// At another index: the empty part is read as it is (a malformed history).
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("q"), empty)
	if _, err := Parse(msg, "c", Options{Aside: &Aside{Part: 0, Bytes: h}}); err == nil || !strings.Contains(err.Error(), "malformed") {
		t.Fatalf("aside used for another part: %v", err)
	}
	// A part with content keeps it.
	other := []byte(`{"version":1,"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"}]}`)
	msg = a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("q"), &a2a.Part{Content: a2a.Raw(other), MediaType: transcript.MediaType})
	in, err := Parse(msg, "c", Options{Aside: &Aside{Part: 1, Bytes: h}})
	if err != nil || len(in.History) != 2 {
		t.Fatalf("content replaced by the aside: %+v %v", in, err)
	}
	if AsideFrom(context.Background()) != nil {
		t.Fatal("an aside from nowhere")
	}
	a := &Aside{Part: 3}
	if AsideFrom(WithAside(context.Background(), a)) != a {
		t.Fatal("the aside is not carried")
	}
}

// TestAsideOver: a part the front counted over the cap is refused with
// the words Parse gives the whole history, in the part's place (a second
// transcript part is refused as such); the mark reads only for its own
// emptied part.
func TestAsideOver(t *testing.T) {
	want := "the history is malformed: " + transcript.ErrOverCap.Error()
	h := a2a.Raw(`{"version":1,"messages":[{"role":"user","content":"hi"}]}`)
	for name, c := range map[string]struct {
		parts []*a2a.Part
		want  string
	}{
		"raw":         {[]*a2a.Part{a2a.NewTextPart("q"), {Content: a2a.Raw{}, MediaType: transcript.MediaType}}, want},
		"data":        {[]*a2a.Part{a2a.NewTextPart("q"), {Content: a2a.Data{Value: map[string]any{}}, MediaType: transcript.MediaType}}, want},
		"second":      {[]*a2a.Part{{Content: h, MediaType: transcript.MediaType}, {Content: a2a.Raw{}, MediaType: transcript.MediaType}}, "the message holds more than one transcript part"},
		"not emptied": {[]*a2a.Part{a2a.NewTextPart("q"), {Content: h, MediaType: transcript.MediaType}}, ""},
		"data held":   {[]*a2a.Part{a2a.NewTextPart("q"), {Content: a2a.Data{Value: map[string]any{"version": 1}}, MediaType: transcript.MediaType}}, ""},
	} {
		_, err := Parse(a2a.NewMessage(a2a.MessageRoleUser, c.parts...), "c", Options{Aside: &Aside{Part: 1, Over: true}})
		if c.want == "" {
			if err != nil && strings.Contains(err.Error(), "2000") {
				t.Errorf("%s: %v", name, err)
			}
			continue
		}
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}
