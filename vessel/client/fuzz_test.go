package client

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// FuzzDecodeFrames feeds newline-separated stream frames (the result object
// of each SSE frame) through the event decoder: it must never panic, and a
// final status must produce exactly one TurnFinished.
func FuzzDecodeFrames(f *testing.F) {
	seeds := []string{
		`{"task":{"id":"T1","contextId":"C1","status":{"state":"TASK_STATE_SUBMITTED"}}}
{"statusUpdate":{"taskId":"T1","contextId":"C1","status":{"state":"TASK_STATE_WORKING","message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"data":{"text":"hi"}}]}},"metadata":{"vessel.event":"text.delta"}}}
{"artifactUpdate":{"taskId":"T1","contextId":"C1","artifact":{"artifactId":"A1","name":"transcript","parts":[{"raw":"eyJ2ZXJzaW9uIjox","mediaType":"application/vnd.astralvessel.transcript+json"}]}}}
{"artifactUpdate":{"taskId":"T1","contextId":"C1","append":true,"lastChunk":true,"artifact":{"artifactId":"A1","parts":[{"raw":"LCJtZXNzYWdlcyI6W119","mediaType":"application/vnd.astralvessel.transcript+json"}]}}}
{"artifactUpdate":{"taskId":"T1","contextId":"C1","artifact":{"artifactId":"A2","name":"answer","parts":[{"text":"**x**","mediaType":"text/markdown"},{"data":[{"type":"card"}],"mediaType":"application/vnd.astral.primitives+json"}]}}}
{"statusUpdate":{"taskId":"T1","contextId":"C1","status":{"state":"TASK_STATE_COMPLETED","message":{"messageId":"m2","role":"ROLE_AGENT","parts":[{"data":{"status":"ok","prompt_tokens":1.0}}]}},"metadata":{"vessel.event":"turn.finished"}}}`,
		`{"statusUpdate":{"taskId":"T","contextId":"C","status":{"state":"TASK_STATE_REJECTED","message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"no text"}]}}}}`,
		`{"artifactUpdate":{"taskId":"T","contextId":"C","artifact":{"artifactId":"F","name":"file","parts":[{"raw":"AAE=","filename":"a.png","mediaType":"image/png","metadata":{"call_id":"c"}}]}}}
{"statusUpdate":{"taskId":"T","contextId":"C","status":{"state":"TASK_STATE_CANCELED"}}}`,
		`{"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"plain"}]}}`,
		`{"statusUpdate":{"taskId":"T","contextId":"C","status":{"state":"TASK_STATE_WORKING","message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"data":{"call_id":5,"exit_code":"x","size":-1e308}}]}},"metadata":{"vessel.event":"tool.finished"}}}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		d := newDecoder()
		finished := 0
		for _, line := range bytes.Split(in, []byte("\n")) {
			var sr a2a.StreamResponse
			if json.Unmarshal(line, &sr) != nil || sr.Event == nil {
				continue
			}
			for _, ev := range d.handle(sr.Event) {
				if _, ok := ev.(TurnFinished); ok {
					finished++
				}
				(&Result{}).add(ev)
			}
		}
		_ = d.flush()
		if finished > 1 {
			t.Fatalf("%d TurnFinished events", finished)
		}
	})
}

// FuzzDecodeEnvelope checks the transcript envelope parser never panics and
// that what it accepts re-encodes and parses to the same count.
func FuzzDecodeEnvelope(f *testing.F) {
	f.Add([]byte(`{"version":1,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"x","arguments":"{}"}}]}]}`))
	f.Add([]byte(`[{"role":"tool","tool_call_id":"c","content":"1"}]`))
	f.Add([]byte(`{"version":2,"messages":[]}`))
	f.Add([]byte(`{"messages":null}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		msgs, err := DecodeEnvelope(in)
		if err != nil {
			return
		}
		b, err := EncodeEnvelope(msgs)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		again, err := DecodeEnvelope(b)
		if err != nil || len(again) != len(msgs) {
			t.Fatalf("round trip: %v, %d vs %d", err, len(again), len(msgs))
		}
	})
}
