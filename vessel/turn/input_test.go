package turn

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/astraldeep/astralvessel-go/vessel/transcript"
)

func TestValidContextID(t *testing.T) {
	for _, ok := range []string{"a", "conv-1", "A.b_c:d-9", strings.Repeat("x", 128)} {
		if !ValidContextID(ok) {
			t.Errorf("%q refused", ok)
		}
	}
	for _, bad := range []string{"", "a b", "ü", "a/b", strings.Repeat("x", 129)} {
		if ValidContextID(bad) {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestParse(t *testing.T) {
	env := `{"version":1,"messages":[{"role":"user","content":"before"},{"role":"assistant","content":"ok"}]}`
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("question"),
		&a2a.Part{Content: a2a.Raw(env), MediaType: transcript.MediaType})
	in, err := Parse(msg, "c1", Options{})
	if err != nil || in.Text != "question" || len(in.History) != 2 {
		t.Fatalf("%+v %v", in, err)
	}
	// Images only when accepted, at most 8.
	img := &a2a.Part{Content: a2a.Raw("\x89PNG"), MediaType: "image/png"}
	if _, err := Parse(a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("q"), img), "c1", Options{}); err == nil {
		t.Fatal("image accepted by an agent without images")
	}
	parts := []*a2a.Part{a2a.NewTextPart("q")}
	for range 9 {
		parts = append(parts, img)
	}
	if _, err := Parse(a2a.NewMessage(a2a.MessageRoleUser, parts...), "c1", Options{AcceptsImages: true}); err == nil {
		t.Fatal("9 images accepted")
	}
	in, err = Parse(a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("q"), img), "c1", Options{AcceptsImages: true})
	if err != nil || len(in.Images) != 1 {
		t.Fatalf("%v", err)
	}
	// Exactly 8 are accepted; an image over 5 MB, an empty one or an
	// unlisted image type is refused.
	in, err = Parse(a2a.NewMessage(a2a.MessageRoleUser, parts[:MaxImages+1]...), "c1", Options{AcceptsImages: true})
	if err != nil || len(in.Images) != MaxImages {
		t.Fatalf("8 images: %v", err)
	}
	for name, p := range map[string]*a2a.Part{
		"too big": {Content: a2a.Raw(make([]byte, MaxImageBytes+1)), MediaType: "image/jpeg"},
		"empty":   {Content: a2a.Raw(nil), MediaType: "image/gif"},
		"bmp":     {Content: a2a.Raw("BM"), MediaType: "image/bmp"},
	} {
		if _, err := Parse(a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("q"), p), "c1", Options{AcceptsImages: true}); err == nil {
			t.Fatalf("%s image accepted", name)
		}
	}
	if _, err := Parse(a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("q"),
		&a2a.Part{Content: a2a.Raw(make([]byte, MaxImageBytes)), MediaType: "image/webp"}), "c1", Options{AcceptsImages: true}); err != nil {
		t.Fatalf("image of exactly the limit: %v", err)
	}
	// An image the checker refuses is refused.
	refuse := func(string, []byte) error { return errors.New("not a PNG") }
	if _, err := Parse(a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("q"), img), "c1", Options{AcceptsImages: true, CheckImage: refuse}); err == nil || !strings.Contains(err.Error(), "invalid") {
		t.Fatalf("invalid image: %v", err)
	}
	// Skill call: the question may come from any of five keys.
	for _, k := range []string{"question", "message", "query", "text", "prompt"} {
		in, err = Parse(a2a.NewMessage(a2a.MessageRoleUser, a2a.NewDataPart(map[string]any{"method": "tools/call", "arguments": map[string]any{k: "from " + k}})), "c1", Options{})
		if err != nil || in.Text != "from "+k || !in.SkillCall {
			t.Fatalf("skill key %s: %+v %v", k, in, err)
		}
	}
	in, err = Parse(a2a.NewMessage(a2a.MessageRoleUser, a2a.NewDataPart(map[string]any{"method": "tools/call", "arguments": map[string]any{"prompt": "p"}})), "c1", Options{})
	if err != nil || in.Text != "p" || !in.SkillCall {
		t.Fatalf("%+v %v", in, err)
	}
	// A skill call is used only when there is no text part.
	in, err = Parse(a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("typed"),
		a2a.NewDataPart(map[string]any{"method": "tools/call", "arguments": map[string]any{"question": "structured"}})), "c1", Options{})
	if err != nil || in.Text != "typed" || in.SkillCall {
		t.Fatalf("text and skill call: %+v %v", in, err)
	}
	// The limit counts characters, not bytes.
	if _, err := Parse(textMsg(strings.Repeat("é", MaxTextChars)), "c1", Options{}); err != nil {
		t.Fatalf("100000 characters: %v", err)
	}
	var rej *Rejection
	if _, err := Parse(textMsg(strings.Repeat("é", MaxTextChars+1)), "c1", Options{}); !errors.As(err, &rej) {
		t.Fatalf("100001 characters: %v", err)
	}
}

func textMsg(s string) *a2a.Message { return a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(s)) }

// FuzzParseMessage feeds arbitrary JSON-RPC message JSON through the SDK's
// decoder and our parser: it must never panic, and errors are rejections.
func FuzzParseMessage(f *testing.F) {
	f.Add([]byte(`{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]}`), "c1")
	f.Add([]byte(`{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"},{"raw":"e30=","mediaType":"application/vnd.astralvessel.transcript+json"}]}`), "c1")
	f.Add([]byte(`{"messageId":"m","role":"ROLE_USER","parts":[{"data":{"method":"tools/call","arguments":{"question":"q"}}}]}`), "c:1")
	f.Add([]byte(`{"messageId":"m","role":"ROLE_USER","parts":[{"data":{"version":1,"messages":[]},"mediaType":"application/vnd.astralvessel.transcript+json"}]}`), "x")
	f.Add([]byte(`{"messageId":"m","role":"ROLE_USER","parts":[{"url":"https://x.invalid/a.png","mediaType":"image/png"}]}`), "")
	f.Fuzz(func(t *testing.T, b []byte, ctxID string) {
		var m a2a.Message
		if json.Unmarshal(b, &m) != nil {
			return
		}
		in, err := Parse(&m, ctxID, Options{AcceptsImages: true})
		if err != nil {
			var rej *Rejection
			if !errors.As(err, &rej) {
				t.Fatalf("not a rejection: %v", err)
			}
			return
		}
		if strings.TrimSpace(in.Text) == "" || !ValidContextID(ctxID) {
			t.Fatal("accepted a turn without text or with a bad context id")
		}
	})
}
