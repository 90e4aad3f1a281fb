package model

import (
	"bytes"
	"fmt"
	"testing"
)

type nopHandler struct{}

func (nopHandler) Text(string)      {}
func (nopHandler) Reasoning(string) {}

// streamBody is what the scripted model sends for a 1,000-piece answer:
// full chat-completion chunks, as real servers send them.
func streamBody(pieces int) []byte {
	var b bytes.Buffer
	head := `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1764480000,"model":"scripted","choices":[{"index":0,"delta":`
	fmt.Fprintf(&b, "data: %s{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\n\n", head)
	for i := range pieces {
		fmt.Fprintf(&b, "data: %s{\"content\":\"word %d of the answer \"},\"finish_reason\":null}]}\n\n", head, i)
	}
	fmt.Fprintf(&b, "data: %s{},\"finish_reason\":\"stop\"}]}\n\n", head)
	b.WriteString(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1764480000,"model":"scripted","choices":[],"usage":{"prompt_tokens":43000,"completion_tokens":1000,"total_tokens":44000}}` + "\n\ndata: [DONE]\n\n")
	return b.Bytes()
}

// BenchmarkStreamDecode reads one 1,000-chunk answer, as a turn of the
// load scenario does.
func BenchmarkStreamDecode(b *testing.B) {
	body := streamBody(1000)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		resp, _, err := readStream(bytes.NewReader(body), Limits{}.withDefaults(), func() {}, nopHandler{}, nil)
		if err != nil || resp.Usage.CompletionTokens != 1000 || resp.FinishReason != "stop" {
			b.Fatalf("%v %+v", err, resp)
		}
	}
}
