package a2acompat

import (
	"bytes"
	"encoding/base64"

	"github.com/astraldeep/astralvessel-go/vessel/internal/jsonscan"
	"github.com/astraldeep/astralvessel-go/vessel/transcript"
	"github.com/astraldeep/astralvessel-go/vessel/turn"
)

// liftMethods are the A2A 1.0 methods whose params carry a message.
var liftMethods = map[string]bool{"SendMessage": true, "SendStreamingMessage": true}

// liftTranscript takes the transcript out of a send request's params
// before the SDK decodes them. A turn's history is most of its body (a
// 1,000-message history is about 175 KB of base64): the SDK would decode
// it once for the params, again for the parts list and again for the part,
// and the vessel once more from the bytes. Here the first part of
// params.message.parts whose mediaType is the transcript's and whose
// content is a "raw" string is base64-decoded once, exactly as
// encoding/json decodes a []byte, and its value in the returned params is
// replaced by "" (an empty raw part in the same place); the decoded bytes
// go to the turn as a turn.Aside.
//
// It lifts nothing (ok false, params to be used as they are) whenever the
// request is not plainly shaped, so that the SDK then reads it, and
// answers it, exactly as before: keys that appear twice or only match
// case-insensitively (encoding/json accepts them), escapes in the raw
// string, content that is not valid base64, an empty content.
func liftTranscript(params []byte) (rest []byte, aside *turn.Aside, ok bool) {
	// A body without the media type has nothing to lift: one byte search
	// instead of a scan.
	if !bytes.Contains(params, []byte(transcript.MediaType)) {
		return nil, nil, false
	}
	var s jsonscan.Scanner
	s.Reset(params)
	part, start, end := -1, 0, 0
	var top jsonscan.Fields
	ok = s.Object(func(key []byte) bool {
		if string(key) != "message" {
			return !jsonscan.FoldsTo(key, "message") && s.Skip()
		}
		if !top.First(1) {
			return false
		}
		var msg jsonscan.Fields
		return s.Object(func(key []byte) bool {
			if string(key) != "parts" {
				return !jsonscan.FoldsTo(key, "parts") && s.Skip()
			}
			if !msg.First(1) {
				return false
			}
			i := -1
			return s.Array(func() bool {
				i++
				if part >= 0 || s.Peek() != '{' {
					return s.Skip()
				}
				var seen jsonscan.Fields
				mt, rs, re := "", -1, -1
				if !s.Object(func(key []byte) bool {
					switch string(key) {
					case "mediaType":
						return seen.First(1) && s.Str(&mt)
					case "raw":
						if !seen.First(2) {
							return false
						}
						s.Peek()
						rs = s.I
						if !s.Skip() {
							return false
						}
						re = s.I
						return true
					}
					return !jsonscan.FoldsTo(key, "mediaType", "raw") && s.Skip()
				}) {
					return false
				}
				if rs >= 0 && turn.MediaType(mt) == transcript.MediaType {
					part, start, end = i, rs, re
				}
				return true
			})
		})
	})
	if !ok || !s.End() || part < 0 {
		return nil, nil, false
	}
	raw := params[start:end]
	if len(raw) < 3 || raw[0] != '"' || bytes.IndexByte(raw, '\\') >= 0 {
		return nil, nil, false // null, empty or escaped: left to the SDK
	}
	enc := raw[1 : len(raw)-1]
	dec := make([]byte, base64.StdEncoding.DecodedLen(len(enc)))
	n, err := base64.StdEncoding.Decode(dec, enc)
	if err != nil || n == 0 {
		return nil, nil, false // the SDK answers it as it always has
	}
	rest = make([]byte, 0, len(params)-len(raw)+2)
	rest = append(rest, params[:start]...)
	rest = append(rest, `""`...)
	rest = append(rest, params[end:]...)
	return rest, &turn.Aside{Part: part, Bytes: dec[:n:n]}, true
}
