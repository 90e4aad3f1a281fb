package a2acompat

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/astraldeep/astralvessel-go/vessel/transcript"
	"github.com/astraldeep/astralvessel-go/vessel/turn"
)

// envelopeOf is a history of n messages as JSON.
func envelopeOf(n int) string {
	msgs := make([]string, n)
	for i := range msgs {
		msgs[i] = `{"role":"user","content":"m"}`
	}
	return `{"version":1,"messages":[` + strings.Join(msgs, ",") + `]}`
}

func rawPart(env string) string {
	return transcriptPart(`"` + base64.StdEncoding.EncodeToString([]byte(env)) + `"`)
}

func dataPart(env string) string {
	return `{"mediaType":"` + transcript.MediaType + `","data":` + env + `}`
}

// checkRefused checks a refusal of params as RefuseOversize or
// liftTranscript made it (rest, aside): the SDK reads rest as it reads
// params but for the refused part, emptied, and the turn gives the words
// transcript.Parse gives the whole history, whenever the SDK reads params.
func checkRefused(t *testing.T, params, rest []byte, aside *turn.Aside) {
	t.Helper()
	if !aside.Over || aside.Bytes != nil {
		t.Fatalf("aside %+v", aside)
	}
	if !json.Valid(rest) {
		t.Fatalf("rewritten params are not JSON: %.300s", rest)
	}
	got, gerr := decodeSend(t, rest)
	orig, oerr := decodeSend(t, params)
	if oerr != nil {
		return // the SDK refuses the original (a raw part's base64 broken after its 2,001st message)
	}
	if gerr != nil {
		t.Fatalf("the original is read, the rewritten one not: %v", gerr)
	}
	p := got.Message.Parts[aside.Part]
	if turn.MediaType(p.MediaType) != transcript.MediaType {
		t.Fatalf("refused part %+v", p)
	}
	_, werr := turn.Parse(orig.Message, "c", turn.Options{})
	_, rerr := turn.Parse(got.Message, "c", turn.Options{Aside: aside})
	if werr == nil || rerr == nil || werr.Error() != rerr.Error() {
		t.Fatalf("the whole request gives %v, the refused one %v", werr, rerr)
	}
	orig.Message.Parts[aside.Part].Content = p.Content
	if a, b := mustJSON(t, orig), mustJSON(t, got); a != b {
		t.Fatalf("requests differ beyond the part:\n%s\n%s", a, b)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRefuseOversize: a raw or data history over the cap is emptied and
// marked, with the turn's words those of the whole history; at the cap,
// or shaped so that the count could differ from the SDK's, it is left.
func TestRefuseOversize(t *testing.T) {
	over, atCap := envelopeOf(transcript.MaxMessages+1), envelopeOf(transcript.MaxMessages)
	big := envelopeOf(10_000)
	for name, c := range map[string]struct {
		parts string
		part  int
	}{
		"raw 2001":                        {`{"text":"q"},` + rawPart(over), 1},
		"raw 10000":                       {`{"text":"q"},` + rawPart(big), 1},
		"data 2001":                       {dataPart(over) + `,{"text":"q"}`, 0},
		"raw broken after the 2001st":     {`{"text":"q"},` + rawPart(over[:len(over)-2]+`!!`), 1},
		"raw then data, both over":        {`{"text":"q"},` + rawPart(big) + `,` + dataPart(big), 1},
		"data then raw, both over":        {`{"text":"q"},` + dataPart(big) + `,` + rawPart(big), 1},
		"raw after a text transcript":     {`{"mediaType":"` + transcript.MediaType + `","text":"{}"},` + rawPart(big), 1},
		"raw with version 2":              {`{"text":"q"},` + rawPart(strings.Replace(big, `"version":1`, `"version":2`, 1)), 1},
		"raw, messages named again":       {`{"text":"q"},` + rawPart(strings.TrimSuffix(big, "}")+`,"messages":[]}`), 1},
		"raw, a bad message after 2001st": {`{"text":"q"},` + rawPart(strings.Replace(big, `]}`, `,{"role":7}]}`, 1)), 1},
	} {
		params := []byte(sendParams(c.parts))
		rest, aside, ok := RefuseOversize(params)
		if !ok || aside.Part != c.part {
			t.Errorf("%s: refused %v, aside %+v", name, ok, aside)
			continue
		}
		checkRefused(t, params, rest, aside)
		if len(rest) > 400 && !strings.Contains(name, "both") { // only the first is emptied
			t.Errorf("%s: %d bytes left", name, len(rest))
		}
		lrest, laside, lok := liftTranscript(params)
		if !lok || string(lrest) != string(rest) || laside.Part != aside.Part || !laside.Over {
			t.Errorf("%s: the JSON-RPC lift refuses it otherwise: %v %+v", name, lok, laside)
		}
	}
	for name, parts := range map[string]string{
		"raw 2000":                    rawPart(atCap),
		"data 2000":                   dataPart(atCap),
		"raw, the list not objects":   rawPart(strings.Replace(big, `[{`, `[1,{`, 1)),
		"raw, malformed early":        rawPart(strings.Replace(big, `"m"}`, `"m"]`, 1)),
		"raw, bad base64 early":       transcriptPart(`"!` + base64.StdEncoding.EncodeToString([]byte(big))[1:] + `"`),
		"raw escaped":                 transcriptPart(`"\/` + base64.StdEncoding.EncodeToString([]byte(big))[1:] + `"`),
		"raw, messages case-folded":   rawPart(strings.Replace(big, `"messages"`, `"Messages"`, 1)),
		"data, messages named twice":  dataPart(strings.TrimSuffix(big, "}") + `,"messages":[]}`),
		"data, messages twice folded": dataPart(strings.TrimSuffix(big, "}") + `,"MESSAGES":[]}`),
		"not a transcript":            `{"mediaType":"text/plain","raw":"` + base64.StdEncoding.EncodeToString([]byte(big)) + `"}`,
		"raw twice":                   `{"mediaType":"` + transcript.MediaType + `","raw":"AAAA","raw":"` + base64.StdEncoding.EncodeToString([]byte(big)) + `"}`,
		"escaped key in metadata":     `{"text":"q","metadata":{"\u0061":1}},` + rawPart(big),
	} {
		if rest, aside, ok := RefuseOversize([]byte(sendParams(parts))); ok {
			t.Errorf("%s: refused: %+v %.200s", name, aside, rest)
		}
	}
	for name, params := range map[string]string{
		"trailing data": sendParams(rawPart(big)) + ` {}`,
		"truncated":     sendParams(rawPart(big))[:len(sendParams(rawPart(big)))-3],
		"not an object": `[` + sendParams(rawPart(big)) + `]`,
	} {
		if _, _, ok := RefuseOversize([]byte(params)); ok {
			t.Errorf("%s: refused", name)
		}
	}
	// At the cap, the JSON-RPC lift hands the whole history aside.
	if _, aside, ok := liftTranscript([]byte(sendParams(rawPart(atCap)))); !ok || aside.Over || string(aside.Bytes) != atCap {
		t.Fatalf("2000 messages: lifted %v %+v", ok, aside)
	}
}

// TestRefuseOversizePaddedHistory: braces and white space before the
// messages list (more than MaxMessages '{' in a string, then more white
// space than countRaw first decodes) do not end the count before the list.
func TestRefuseOversizePaddedHistory(t *testing.T) {
	env := `{"version":1,"x":"` + strings.Repeat("{", transcript.MaxMessages+1) + `",` + strings.Repeat(" ", 2*firstDecode) +
		strings.TrimPrefix(envelopeOf(10_000), `{"version":1,`)
	if _, err := transcript.Parse([]byte(env)); err != transcript.ErrOverCap {
		t.Fatalf("Parse: %v", err)
	}
	params := []byte(sendParams(`{"text":"q"},` + rawPart(env)))
	rest, aside, ok := RefuseOversize(params)
	if !ok || aside.Part != 1 {
		t.Fatalf("not refused: %v %+v", ok, aside)
	}
	checkRefused(t, params, rest, aside)
	if _, laside, lok := liftTranscript(params); !lok || !laside.Over {
		t.Fatalf("the JSON-RPC lift does not refuse it: %v %+v", lok, laside)
	}
}

// TestRefuseOversizeMediaTypeSpellings: a history over the cap is refused
// however its media type is spelled as turn.MediaType reads it (other
// case, parameters, escapes).
func TestRefuseOversizeMediaTypeSpellings(t *testing.T) {
	enc := base64.StdEncoding.EncodeToString([]byte(envelopeOf(10_000)))
	for _, mt := range []string{strings.ToUpper(transcript.MediaType), "Application/Vnd.AstralVessel.Transcript+JSON; v=1",
		`application\/vnd.astralvessel.transcript+json`, `\u0061pplication/vnd.astralvessel.transcript+json`} {
		for kind, part := range map[string]string{
			"raw":  `{"mediaType":"` + mt + `","raw":"` + enc + `"}`,
			"data": `{"mediaType":"` + mt + `","data":` + envelopeOf(10_000) + `}`,
		} {
			params := []byte(sendParams(`{"text":"q"},` + part))
			rest, aside, ok := RefuseOversize(params)
			if !ok || aside.Part != 1 {
				t.Errorf("%s %s: not refused", kind, mt)
				continue
			}
			checkRefused(t, params, rest, aside)
		}
	}
}

// TestHandlerRefusesOversize: on JSON-RPC the SDK gets the send with the
// history emptied and the mark in its context; the 0.3 methods are passed
// on whole.
func TestHandlerRefusesOversize(t *testing.T) {
	params := sendParams(`{"text":"q"},` + rawPart(envelopeOf(10_000)))
	c, _ := serve(t, `{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":`+params+`}`, true)
	if c.aside == nil || !c.aside.Over || c.aside.Part != 1 || len(c.body) > 400 {
		t.Fatalf("not refused: %+v %.300s", c.aside, c.body)
	}
	c, _ = serve(t, `{"jsonrpc":"2.0","id":1,"method":"message/stream","params":`+params+`}`, true)
	if c.aside != nil || len(c.body) < len(params) {
		t.Fatalf("a 0.3 call refused: %+v", c.aside)
	}
}

// TestOverMarkIsTheVessels: the emptied parts a caller may send itself are
// read as what they are, not as a history over the cap.
func TestOverMarkIsTheVessels(t *testing.T) {
	for _, parts := range []string{transcriptPart(`""`), dataPart(`{}`)} {
		req, err := decodeSend(t, []byte(sendParams(`{"text":"q"},`+parts)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := turn.Parse(req.Message, "c", turn.Options{}); err == nil || strings.Contains(err.Error(), "2000") {
			t.Fatalf("%s: %v", parts, err)
		}
		if _, _, ok := RefuseOversize([]byte(sendParams(`{"text":"q"},` + parts))); ok {
			t.Fatalf("%s: refused", parts)
		}
	}
	// A mark for another part than the emptied one is not read.
	req, _ := decodeSend(t, []byte(sendParams(`{"text":"q"},`+rawPart(envelopeOf(1)))))
	if _, err := turn.Parse(req.Message, "c", turn.Options{Aside: &turn.Aside{Part: 1, Over: true}}); err != nil {
		t.Fatalf("a full part read as over: %v", err)
	}
	req.Message.Parts[1].Content = a2a.Raw{}
	if _, err := turn.Parse(req.Message, "c", turn.Options{Aside: &turn.Aside{Part: 0, Over: true}}); err == nil || strings.Contains(err.Error(), "2000") {
		t.Fatalf("a mark for part 0 read for part 1: %v", err)
	}
}

// FuzzRefuseOversize: any params, refused or not, without panicking; a
// refusal leaves valid JSON the SDK reads as the original but for the
// emptied part, and the turn's words are those the whole history gives
// (so a history of at most 2000 messages is never refused).
func FuzzRefuseOversize(f *testing.F) {
	// Small messages keep the inputs small enough to mutate quickly.
	over := `{"version":1,"messages":[` + strings.Repeat(`{},`, transcript.MaxMessages) + `{}]}`
	for _, s := range []string{
		sendParams(`{"text":"q"},` + rawPart(over)),
		sendParams(`{"text":"q"},` + dataPart(over)),
		sendParams(`{"text":"q"},` + rawPart(strings.Replace(over, `{},`, ``, 1))),
		sendParams(`{"text":"q"},` + rawPart(strings.Replace(over, `{},`, `{"content":[{"type":"text","text":"{"}]},`, 3))),
		sendParams(dataPart(`{"messages":[{},{}],"version":1}`)),
		sendParams(rawPart(`{"messages":[{},{}]}`)),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, params []byte) {
		rest, aside, ok := RefuseOversize(params)
		lrest, laside, lok := liftTranscript(params)
		if ok != (lok && laside.Over) {
			t.Fatalf("RefuseOversize %v, the lift %v %+v", ok, lok, laside)
		}
		if !ok {
			return
		}
		if string(rest) != string(lrest) || aside.Part != laside.Part || !laside.Over {
			t.Fatal("RefuseOversize and the lift refuse differently")
		}
		checkRefused(t, params, rest, aside)
	})
}
