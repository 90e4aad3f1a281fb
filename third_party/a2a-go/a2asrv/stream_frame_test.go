// Copyright 2025 The A2A Authors
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

package a2asrv

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/internal/jsonrpc"
)

// frameText draws strings with what encoding/json escapes or rewrites:
// HTML characters, U+2028/U+2029, control characters, quotes, backslashes,
// invalid UTF-8, non-ASCII.
func frameText(r *rand.Rand) string {
	pieces := []string{"a", "hello ", "<b>", "&amp;", ">", "\u2028", "\u2029", "\x01", "\n", "\t", `"`, `\`, "\xff", "é", "日本", "\U0001F600", "/", " "}
	var b strings.Builder
	for n := r.IntN(12); n > 0; n-- {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}

func frameMeta(r *rand.Rand, depth int) map[string]any {
	if r.IntN(3) == 0 {
		return nil
	}
	m := map[string]any{}
	for n := r.IntN(4); n > 0; n-- {
		k := frameText(r)
		switch r.IntN(7) {
		case 0:
			m[k] = frameText(r)
		case 1:
			m[k] = r.Float64() * 1e6
		case 2:
			m[k] = json.RawMessage(" { \"x\" : [ 1 , \"<y>\" ] } ")
		case 3:
			if depth < 2 {
				m[k] = frameMeta(r, depth+1)
			}
		case 4:
			m[k] = []any{frameText(r), nil, true, 3}
		case 5:
			m[k] = nil
		default:
			m[k] = []byte(frameText(r))
		}
	}
	return m
}

func frameParts(r *rand.Rand) a2a.ContentParts {
	switch r.IntN(6) {
	case 0:
		return nil
	case 1:
		return a2a.ContentParts{}
	}
	var parts a2a.ContentParts
	for n := 1 + r.IntN(4); n > 0; n-- {
		var p *a2a.Part
		switch r.IntN(6) {
		case 0:
			p = nil
		case 1:
			p = a2a.NewRawPart([]byte(frameText(r)))
		case 2:
			p = a2a.NewDataPart(frameMeta(r, 0))
		case 3:
			p = &a2a.Part{Content: a2a.URL(frameText(r)), Filename: frameText(r)}
		case 4:
			p = &a2a.Part{} // no content
		default:
			p = a2a.NewTextPart(frameText(r))
		}
		if p != nil {
			p.MediaType = []string{"", "text/plain", "application/<x>"}[r.IntN(3)]
			p.Metadata = frameMeta(r, 0)
		}
		parts = append(parts, p)
	}
	return parts
}

func frameMessage(r *rand.Rand) *a2a.Message {
	m := a2a.NewMessage(a2a.MessageRoleAgent, frameParts(r)...)
	if r.IntN(4) == 0 {
		m.Parts = frameParts(r)
	}
	m.ContextID, m.TaskID, m.Metadata = frameText(r), a2a.TaskID(frameText(r)), frameMeta(r, 0)
	return m
}

func frameEvent(r *rand.Rand) a2a.Event {
	info := a2a.TaskInfo{TaskID: a2a.TaskID(frameText(r)), ContextID: frameText(r)}
	ts := time.Date(2026, 12, 3, 15, 4, 5, r.IntN(1e9), time.UTC)
	switch r.IntN(5) {
	case 0:
		return frameMessage(r)
	case 1:
		t := &a2a.Task{ID: info.TaskID, ContextID: info.ContextID, Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Message: frameMessage(r), Timestamp: &ts}, Metadata: frameMeta(r, 0)}
		for n := r.IntN(3); n > 0; n-- {
			t.History = append(t.History, frameMessage(r))
			t.Artifacts = append(t.Artifacts, &a2a.Artifact{ID: a2a.ArtifactID(frameText(r)), Name: frameText(r), Parts: frameParts(r)})
		}
		return t
	case 2:
		e := a2a.NewStatusUpdateEvent(info, a2a.TaskStateCompleted, nil)
		if r.IntN(2) == 0 {
			e.Status.Message = frameMessage(r)
		}
		e.Metadata = frameMeta(r, 0)
		return e
	case 3:
		e := a2a.NewArtifactEvent(info, frameParts(r)...)
		e.Artifact.Parts, e.Append, e.LastChunk, e.Metadata = frameParts(r), r.IntN(2) == 0, r.IntN(2) == 0, frameMeta(r, 0)
		return e
	default:
		return nil // an unknown event: MarshalJSON fails
	}
}

// TestStreamFrameEqualsMarshal checks the patched frame encoding
// (marshalStreamResponse, ContentParts.MarshalJSON) against json.Marshal of
// the response as a2a-go built it: the same bytes, or the same error.
func TestStreamFrameEqualsMarshal(t *testing.T) {
	r := rand.New(rand.NewPCG(22, 3))
	ids := []any{"req-1", "<id>&\u2028", 7.0, json.Number("12"), nil, int64(-3)}
	for i := range 4000 {
		event := frameEvent(r)
		req := &jsonrpc.ServerRequest{ID: ids[i%len(ids)]}
		got, gotErr := marshalStreamResponse(req, event)
		want, wantErr := json.Marshal(jsonrpc.ServerResponse{JSONRPC: jsonrpc.Version, ID: req.ID, Result: a2a.StreamResponse{Event: event}})
		if (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
			t.Fatalf("event %d: error %v, json.Marshal %v", i, gotErr, wantErr)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("event %d:\n got %s\nwant %s", i, got, want)
		}
		if event == nil {
			continue
		}
		var parts a2a.ContentParts
		switch e := event.(type) {
		case *a2a.Message:
			parts = e.Parts
		case *a2a.TaskArtifactUpdateEvent:
			parts = e.Artifact.Parts
		default:
			continue
		}
		got, gotErr = parts.MarshalJSON()
		want, wantErr = json.Marshal([]*a2a.Part(parts))
		if gotErr != nil || wantErr != nil || !bytes.Equal(got, want) {
			t.Fatalf("event %d parts: %s (%v), json.Marshal %s (%v)", i, got, gotErr, want, wantErr)
		}
	}
}

// TestStreamFrameMarshalError: a part that cannot be encoded fails the
// frame with json.Marshal's error, as before the patch.
func TestStreamFrameMarshalError(t *testing.T) {
	bad := a2a.NewDataPart(map[string]any{"f": func() {}})
	for _, event := range []a2a.Event{
		a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("ok"), bad),
		a2a.NewArtifactEvent(a2a.TaskInfo{TaskID: "t", ContextID: "c"}, bad),
	} {
		req := &jsonrpc.ServerRequest{ID: "1"}
		_, gotErr := marshalStreamResponse(req, event)
		_, wantErr := json.Marshal(jsonrpc.ServerResponse{JSONRPC: jsonrpc.Version, ID: req.ID, Result: a2a.StreamResponse{Event: event}})
		if gotErr == nil || wantErr == nil || gotErr.Error() != wantErr.Error() {
			t.Fatalf("%T: error %v, json.Marshal %v", event, gotErr, wantErr)
		}
	}
}
