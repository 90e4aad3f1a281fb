// Package turn reads an A2A message into a turn's input: the user's text,
// the history, images, and whether it came as a structured skill call.
// Every failure is a *Rejection whose text is shown to the caller.
package turn

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/astraldeep/astralvessel-go/vessel/transcript"
)

// Limits of one turn's input.
const (
	MaxTextChars  = 100_000
	MaxImages     = 8
	MaxImageBytes = 5 << 20
	MaxContextID  = 128
)

// ImageMediaTypes are the image types a turn may attach.
var ImageMediaTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// Input is a validated turn.
type Input struct {
	Text      string
	History   []transcript.Message
	Images    []Image
	SkillCall bool // the question came from a tools/call data part
}

// Image is an attached image.
type Image struct {
	MediaType string
	Data      []byte
}

// Rejection says why a turn was refused.
type Rejection struct{ Reason string }

func (r *Rejection) Error() string { return r.Reason }

func reject(format string, args ...any) error {
	return &Rejection{Reason: fmt.Sprintf(format, args...)}
}

// Options are the agent-specific parts of the checks.
type Options struct {
	AcceptsImages bool
	// CheckImage, when set, looks inside an image (format, dimensions); the
	// identity helper's vessel/images provides it.
	CheckImage func(mediaType string, data []byte) error
	// Aside, when set, holds the content of the transcript part at
	// Aside.Part, lifted out of the request body (see Aside).
	Aside *Aside
}

// ValidContextID reports whether id is 1 to 128 of letters, digits and . _ : -.
func ValidContextID(id string) bool {
	if len(id) == 0 || len(id) > MaxContextID {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == ':', c == '-':
		default:
			return false
		}
	}
	return true
}

// Parse reads msg. contextID is the id the task will carry (the caller's or
// a generated one).
func Parse(msg *a2a.Message, contextID string, opt Options) (*Input, error) {
	if msg == nil {
		return nil, reject("the request has no message")
	}
	if !ValidContextID(contextID) {
		return nil, reject("the contextId must be 1 to %d characters of letters, digits and . _ : -", MaxContextID)
	}
	r := &partReader{in: &Input{}, opt: opt}
	for i, p := range msg.Parts {
		if err := r.part(i, p); err != nil {
			return nil, err
		}
	}
	text, err := r.text()
	if err != nil {
		return nil, err
	}
	r.in.Text = text
	return r.in, nil
}

// partReader gathers a message's parts into a turn's input.
type partReader struct {
	in         *Input
	opt        Options
	texts      []string
	skill      map[string]any
	sawHistory bool
}

// part reads part i by its content kind.
func (r *partReader) part(i int, p *a2a.Part) error {
	if p == nil {
		return reject("part %d is empty", i)
	}
	mt := MediaType(p.MediaType)
	switch c := p.Content.(type) {
	case a2a.Text:
		if mt == transcript.MediaType {
			return r.in.readHistory([]byte(c), &r.sawHistory)
		}
		r.texts = append(r.texts, string(c))
		return nil
	case a2a.Raw:
		return r.raw(i, mt, p.MediaType, c)
	case a2a.Data:
		return r.data(i, mt, c)
	case a2a.URL:
		return reject("part %d: URL parts are not accepted; attach images as raw bytes", i)
	default:
		return reject("part %d has no content", i)
	}
}

// raw reads a raw part: a history (perhaps carried aside) or an image.
func (r *partReader) raw(i int, mt, declared string, c a2a.Raw) error {
	switch {
	case mt == transcript.MediaType:
		if a := r.opt.Aside; a != nil && i == a.Part && len(c) == 0 {
			if a.Over {
				return r.in.overCap(&r.sawHistory)
			}
			c = a.take()
		}
		return r.in.readHistory(c, &r.sawHistory)
	case ImageMediaTypes[mt]:
		return r.in.addImage(mt, c, r.opt)
	case strings.HasPrefix(mt, "image/"):
		return reject("part %d: image type %q is not accepted; send PNG, JPEG, GIF or WebP", i, mt)
	default:
		return reject("part %d: raw content of type %q is not accepted", i, declared)
	}
}

// data reads a data part: a history, or the one tools/call skill call.
func (r *partReader) data(i int, mt string, c a2a.Data) error {
	if mt == transcript.MediaType {
		if a := r.opt.Aside; a != nil && a.Over && i == a.Part && isEmptyObject(c.Value) {
			return r.in.overCap(&r.sawHistory)
		}
		b, err := json.Marshal(c.Value)
		if err != nil {
			return reject("part %d: the history could not be read", i)
		}
		return r.in.readHistory(b, &r.sawHistory)
	}
	if m, ok := c.Value.(map[string]any); ok && m["method"] == "tools/call" {
		if r.skill != nil {
			return reject("the message holds more than one tools/call part")
		}
		r.skill = m
		return nil
	}
	return reject("part %d: a data part must be a transcript or a tools/call skill call", i)
}

// text is the turn's question: the text parts joined, or, when there is
// none, the skill call's question; it must be non-empty UTF-8 within
// MaxTextChars.
func (r *partReader) text() (string, error) {
	text := strings.Join(r.texts, "\n")
	if strings.TrimSpace(text) == "" && r.skill != nil {
		q, err := skillQuestion(r.skill)
		if err != nil {
			return "", err
		}
		text, r.in.SkillCall = q, true
	}
	if strings.TrimSpace(text) == "" {
		return "", reject("the message has no text")
	}
	if !utf8.ValidString(text) {
		return "", reject("the text is not valid UTF-8")
	}
	if n := utf8.RuneCountInString(text); n > MaxTextChars {
		return "", reject("the text is %d characters long; at most %d are allowed", n, MaxTextChars)
	}
	return text, nil
}

// MediaType is a part's media type as Parse compares it: lower case,
// without parameters or surrounding space.
func MediaType(s string) string {
	mt := strings.ToLower(strings.TrimSpace(s))
	if k := strings.IndexByte(mt, ';'); k >= 0 {
		mt = strings.TrimSpace(mt[:k])
	}
	return mt
}

func (in *Input) readHistory(b []byte, saw *bool) error {
	if *saw {
		return reject("the message holds more than one transcript part")
	}
	*saw = true
	env, err := transcript.Parse(b)
	if err != nil {
		return reject("the history is malformed: %s", err.Error())
	}
	in.History = env.Messages
	return nil
}

// overCap refuses a history part the front counted over the cap
// (Aside.Over), in the place and with the words readHistory would give.
func (in *Input) overCap(saw *bool) error {
	if *saw {
		return reject("the message holds more than one transcript part")
	}
	*saw = true
	return reject("the history is malformed: %s", transcript.ErrOverCap.Error())
}

func isEmptyObject(v any) bool {
	m, ok := v.(map[string]any)
	return ok && len(m) == 0
}

func (in *Input) addImage(mt string, data []byte, opt Options) error {
	if !opt.AcceptsImages {
		return reject("this agent does not accept images")
	}
	if len(in.Images) >= MaxImages {
		return reject("at most %d images may be attached", MaxImages)
	}
	if len(data) == 0 || len(data) > MaxImageBytes {
		return reject("image %d is %d bytes; images must be 1 byte to 5 MB", len(in.Images)+1, len(data))
	}
	if opt.CheckImage != nil {
		if err := opt.CheckImage(mt, data); err != nil {
			return reject("image %d is invalid: %s", len(in.Images)+1, err.Error())
		}
	}
	in.Images = append(in.Images, Image{MediaType: mt, Data: data})
	return nil
}

// skillQuestion takes the question out of a {"method":"tools/call",
// "arguments":{...}} skill call.
func skillQuestion(m map[string]any) (string, error) {
	args, _ := m["arguments"].(map[string]any)
	for _, k := range []string{"question", "message", "query", "text", "prompt"} {
		if s, ok := args[k].(string); ok && strings.TrimSpace(s) != "" {
			return s, nil
		}
	}
	return "", reject("the tools/call skill call has no question (arguments.question, message, query, text or prompt)")
}
