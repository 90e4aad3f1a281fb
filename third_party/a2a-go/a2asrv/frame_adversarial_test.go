package a2asrv

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/internal/jsonrpc"
)

type ptrID struct{ V string }

func (p *ptrID) MarshalJSON() ([]byte, error) { return []byte(`"ptr"`), nil }

type badJSONID struct{}

func (badJSONID) MarshalJSON() ([]byte, error) { return []byte(`{bad`), nil }

// TestAdversarialFrameEdges: ids and events the random test does not draw:
// raw ids with white space and HTML, ids whose marshaller fails or is on
// the pointer, typed nil events, NaN and cyclic data after a good part,
// a non-compact raw data value, a nil artifact, nested parts in data.
func TestAdversarialFrameEdges(t *testing.T) {
	cyc := map[string]any{}
	cyc["self"] = cyc
	good := a2a.NewTextPart("<ok>\u2028")
	ids := []any{json.RawMessage(" { \"a\" : \"<&>\" } "), json.Number("abc"), json.Number("1e400"), ptrID{"x"}, &ptrID{"x"},
		badJSONID{}, map[string]any{"<": math.Inf(1)}, []byte("<b>"), "\xff\xed\xa0\x80", uint8(3), float32(0.1), struct{}{}}
	events := []a2a.Event{
		(*a2a.Message)(nil), (*a2a.Task)(nil), (*a2a.TaskStatusUpdateEvent)(nil), (*a2a.TaskArtifactUpdateEvent)(nil),
		a2a.NewMessage(a2a.MessageRoleAgent, good, a2a.NewDataPart(math.NaN())),
		a2a.NewMessage(a2a.MessageRoleAgent, good, a2a.NewDataPart(cyc)),
		a2a.NewMessage(a2a.MessageRoleAgent, good, a2a.NewDataPart(json.RawMessage(" [ \"<x>\" , 1 ] ")), nil),
		a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewDataPart(map[string]any{"p": a2a.ContentParts{good, nil}})),
		a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewDataPart(json.RawMessage("{bad"))),
		&a2a.Task{ID: "t", Artifacts: []*a2a.Artifact{nil, {ID: "a", Parts: a2a.ContentParts{}}}},
		&a2a.TaskArtifactUpdateEvent{TaskID: "t"},
	}
	for _, id := range append(ids, nil) {
		for i, event := range events {
			req := &jsonrpc.ServerRequest{ID: id}
			got, gotErr := marshalStreamResponse(req, event)
			want, wantErr := json.Marshal(jsonrpc.ServerResponse{JSONRPC: jsonrpc.Version, ID: req.ID, Result: a2a.StreamResponse{Event: event}})
			if (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() || !bytes.Equal(got, want) {
				t.Errorf("id %#v event %d: %s (%v), json.Marshal %s (%v)", id, i, got, gotErr, want, wantErr)
			}
		}
	}
}
