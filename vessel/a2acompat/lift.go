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
// A history over the cap is not decoded whole: see RefuseOversize, which
// this does first (the returned Aside is then Over, without bytes).
//
// It lifts nothing (ok false, params to be used as they are) whenever the
// request is not plainly shaped, so that the SDK then reads it, and
// answers it, exactly as before: keys that appear twice or only match
// case-insensitively (encoding/json accepts them), escapes in the raw
// string, content that is not valid base64, an empty content.
func liftTranscript(params []byte) (rest []byte, aside *turn.Aside, ok bool) {
	tp, found := findTranscript(params)
	if !found {
		return nil, nil, false
	}
	enc, plain := tp.rawText(params)
	var overRaw bool
	var dec []byte
	if plain {
		overRaw, dec = countRaw(enc, true)
	}
	if rest, aside, ok := tp.refuse(params, overRaw); ok {
		return rest, aside, true
	}
	if len(dec) == 0 {
		// Null, empty, escaped or not valid base64: left to the SDK, which
		// answers it as it always has.
		return nil, nil, false
	}
	return replaceValue(params, tp.raw, `""`), &turn.Aside{Part: tp.raw.part, Bytes: dec}, true
}

// RefuseOversize is the front's check of a send request's history, for
// both HTTP bindings (params: a JSON-RPC request's params, or an HTTP+JSON
// send's body), before the SDK decodes it. When the first transcript part
// of params.message.parts, as a "raw" base64 string or as "data", holds
// more than transcript.MaxMessages messages, counted as transcript.Parse
// counts them (transcript.CountMessages: the first MaxMessages+1 entries
// of the first "messages" list, each a JSON object), it returns params
// with that part's content emptied (raw "", data {}) and an Aside marked
// Over for the turn's context: the turn is then rejected, as a task in
// TASK_STATE_REJECTED with transcript.ErrOverCap's words, as it would be
// had the SDK decoded the whole request. Only the base64 up to the
// (MaxMessages+1)th message is decoded; the rest of the string is not
// read as base64 (its JSON was checked: it is a plain string).
//
// Anything else (ok false) is left as it is: a history within the cap,
// one it cannot count without decoding differently from the SDK (escapes,
// keys twice or in other case, see liftTranscript; a key written with an
// escape anywhere in params, nested values included), params that are not
// one valid JSON object, a data history naming "messages" twice (the SDK
// would keep the last). A caller cannot ask for the refusal: the mark is
// in the request's context, never in what it sends.
func RefuseOversize(params []byte) (rest []byte, aside *turn.Aside, ok bool) {
	tp, found := findTranscript(params)
	if !found {
		return nil, nil, false
	}
	enc, plain := tp.rawText(params)
	overRaw := false
	if plain {
		overRaw, _ = countRaw(enc, false)
	}
	return tp.refuse(params, overRaw)
}

// span is a part's content value in params; part is -1 when absent.
type span struct{ part, start, end int }

// transcriptParts are where the first raw and the first data transcript
// parts' contents are in a send's params.
type transcriptParts struct{ raw, data span }

// refuse is RefuseOversize for found parts, overRaw telling whether the
// raw one is over the cap: the part over the cap, the earlier of the two
// when both are.
func (tp transcriptParts) refuse(params []byte, overRaw bool) ([]byte, *turn.Aside, bool) {
	overData := tp.data.part >= 0 && dataOverCap(params[tp.data.start:tp.data.end])
	switch {
	case overRaw && (!overData || tp.raw.part < tp.data.part):
		return replaceValue(params, tp.raw, `""`), &turn.Aside{Part: tp.raw.part, Over: true}, true
	case overData:
		return replaceValue(params, tp.data, `{}`), &turn.Aside{Part: tp.data.part, Over: true}, true
	}
	return nil, nil, false
}

// rawText returns the raw part's base64 when it is a plain, non-empty
// JSON string: no escapes.
func (tp transcriptParts) rawText(params []byte) ([]byte, bool) {
	if tp.raw.part < 0 {
		return nil, false
	}
	raw := params[tp.raw.start:tp.raw.end]
	if len(raw) < 3 || raw[0] != '"' || bytes.IndexByte(raw, '\\') >= 0 {
		return nil, false
	}
	return raw[1 : len(raw)-1], true
}

// replaceValue returns params with the value at sp replaced by v.
func replaceValue(params []byte, sp span, v string) []byte {
	rest := make([]byte, 0, len(params)-(sp.end-sp.start)+len(v))
	rest = append(rest, params[:sp.start]...)
	rest = append(rest, v...)
	return append(rest, params[sp.end:]...)
}

// quickCheckMax is the largest params findTranscript reads only when they
// hold transcript.MediaType as written.
const quickCheckMax = 64 << 10

// findTranscript reads params (one JSON object, read whole: found is false
// for anything else) for the first part of message.parts whose mediaType
// is the transcript's with a "raw" member, and the first with a "data"
// member.
func findTranscript(params []byte) (tp transcriptParts, found bool) {
	// A small body without the media type as written has nothing to lift:
	// one byte search instead of a scan. It does not see the type in other
	// case or escaped (turn.MediaType and the SDK do), so a larger body is
	// always scanned: a history over the cap is refused here however its
	// media type is spelled, and what a small one costs the SDK to decode
	// is bounded by quickCheckMax.
	if len(params) <= quickCheckMax && !bytes.Contains(params, []byte(transcript.MediaType)) {
		return tp, false
	}
	tp = transcriptParts{raw: span{part: -1}, data: span{part: -1}}
	var s jsonscan.Scanner
	s.Reset(params)
	var top jsonscan.Fields
	ok := s.Object(func(key []byte) bool {
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
				if s.Peek() != '{' || (tp.raw.part >= 0 && tp.data.part >= 0) {
					return s.Skip()
				}
				return readPart(&s, i, &tp)
			})
		})
	})
	return tp, ok && s.End() && (tp.raw.part >= 0 || tp.data.part >= 0)
}

// readPart reads part i, noting its raw or data content when it is the
// first of its kind with the transcript's media type.
func readPart(s *jsonscan.Scanner, i int, tp *transcriptParts) bool {
	var seen jsonscan.Fields
	mt := ""
	raw, data := span{part: -1}, span{part: -1}
	value := func(sp *span) bool {
		s.Peek()
		start := s.I
		if !s.Skip() {
			return false
		}
		*sp = span{part: i, start: start, end: s.I}
		return true
	}
	if !s.Object(func(key []byte) bool {
		switch string(key) {
		case "mediaType":
			return seen.First(1) && s.Str(&mt)
		case "raw":
			return seen.First(2) && value(&raw)
		case "data":
			return seen.First(4) && value(&data)
		}
		return !jsonscan.FoldsTo(key, "mediaType", "raw", "data") && s.Skip()
	}) {
		return false
	}
	if turn.MediaType(mt) == transcript.MediaType {
		if raw.part >= 0 && tp.raw.part < 0 {
			tp.raw = raw
		}
		if data.part >= 0 && tp.data.part < 0 {
			tp.data = data
		}
	}
	return true
}

// dataOverCap reports whether a data part's value (valid JSON) is a
// history over the cap with one member named messages in any case.
func dataOverCap(v []byte) bool {
	if bytes.Count(v, []byte{'{'}) <= transcript.MaxMessages {
		return false
	}
	if n, _ := transcript.CountMessages(v); n <= transcript.MaxMessages {
		return false
	}
	var s jsonscan.Scanner
	s.Reset(v)
	named := 0
	return s.Object(func(key []byte) bool {
		if jsonscan.FoldsTo(key, "messages") {
			named++
		}
		return s.Skip()
	}) && named == 1
}

// firstDecode is how many bytes countRaw decodes before it first looks.
const firstDecode = 48 << 10

// countRaw decodes enc, a raw part's base64, as encoding/json decodes a
// []byte, only as far as it takes to tell whether the history holds more
// than transcript.MaxMessages messages (over: dec is nil). It decodes in
// pieces of whole quanta, grown towards where the (MaxMessages+1)th
// message should end, and counts with transcript.CountMessages only once
// the decoded bytes hold more '{' than MaxMessages (each message is an
// object). When the history is within the cap, keep asks for the whole
// content decoded, as dec; without keep, dec is nil and the decoding stops
// once the count is known. Content that is not valid base64 is never over
// unless its first MaxMessages+1 messages decode first; dec is then nil.
func countRaw(enc []byte, keep bool) (over bool, dec []byte) {
	whole := base64.StdEncoding.DecodedLen(len(enc))
	size := min(whole, firstDecode)
	if keep {
		// The whole content is wanted unless it is over the cap: one
		// allocation of its size, no copies as it is decoded.
		size = whole
	}
	dec = make([]byte, 0, size)
	braces, counted, final := 0, 0, false
	for pos := 0; pos < len(enc); {
		next := len(enc)
		if !final {
			// Enough for the messages still to count at the density seen
			// so far, at least half again what is decoded, in whole quanta.
			want := max(firstDecode, len(dec)/2)
			if counted > 0 {
				want = max(want, len(dec)*(transcript.MaxMessages+1)/counted*9/8-len(dec))
			}
			next = min(len(enc), pos+want/3*4)
		} else if !keep {
			return false, nil
		}
		// next-pos is whole quanta but at the end, where it decodes to at
		// most (next-pos)/4*3 bytes too (whole counts the same way).
		if need := min(whole, len(dec)+(next-pos)/4*3); need > cap(dec) {
			grown := make([]byte, len(dec), min(whole, max(need, 2*cap(dec))))
			copy(grown, dec)
			dec = grown
		}
		n, err := base64.StdEncoding.Decode(dec[len(dec):cap(dec)], enc[pos:next])
		if err != nil || (next < len(enc) && n != (next-pos)/4*3) {
			return false, nil // padding or a bad byte before the end
		}
		braces += bytes.Count(dec[len(dec):len(dec)+n], []byte{'{'})
		dec, pos = dec[:len(dec)+n], next
		if !final && braces > transcript.MaxMessages {
			counted, final = transcript.CountMessages(dec)
			if counted > transcript.MaxMessages {
				return true, nil
			}
		}
	}
	if !keep {
		return false, nil
	}
	return false, dec
}
