package scripted

import (
	"encoding/json"

	"github.com/astraldeep/astralvessel-go/vessel/internal/jsonscan"
)

// decodeRequest reads the members of a chat completion request that
// matching uses. Requests carry whole conversations (the load tool sends
// 1,000 messages), so the common shape is scanned without building the
// messages; message contents stay raw slices of body, decoded only for the
// messages a rule looks at. Anything unusual goes to json.Unmarshal.
func decodeRequest(body []byte, req *request) error {
	if scanRequest(body, req) {
		return nil
	}
	*req = request{}
	return json.Unmarshal(body, req)
}

func scanRequest(body []byte, req *request) bool {
	var s jsonscan.Scanner
	s.Reset(body)
	seen := map[string]bool{}
	ok := s.Object(func(key []byte) bool {
		switch string(key) {
		case "model", "messages", "tools", "stream":
			if seen[string(key)] {
				return false // duplicates: encoding/json's rules
			}
			seen[string(key)] = true
		}
		switch string(key) {
		case "model":
			return s.Str(&req.Model)
		case "stream":
			return s.Bool(&req.Stream)
		case "messages":
			if s.Null() {
				return true
			}
			req.Messages = make([]message, 0, 64)
			return s.Array(func() bool {
				var m message
				mok := s.Object(func(k []byte) bool {
					switch string(k) {
					case "role":
						return s.StrKnown(&m.Role, "user", "assistant", "tool", "system")
					case "content":
						raw, ok := s.Raw()
						m.Content = raw
						return ok
					case "tool_call_id":
						return s.Str(&m.ToolCallID)
					}
					return !jsonscan.FoldsTo(k, "role", "content", "tool_call_id") && s.Skip()
				})
				req.Messages = append(req.Messages, m)
				return mok
			})
		case "tools":
			if s.Null() {
				return true
			}
			return s.Array(func() bool {
				var name string
				tok := s.Object(func(k []byte) bool {
					if string(k) != "function" {
						return !jsonscan.FoldsTo(k, "function") && s.Skip()
					}
					return s.Object(func(k []byte) bool {
						if string(k) == "name" {
							return s.Str(&name)
						}
						return !jsonscan.FoldsTo(k, "name") && s.Skip()
					})
				})
				req.Tools = append(req.Tools, toolRef{})
				req.Tools[len(req.Tools)-1].Function.Name = name
				return tok
			})
		}
		return !jsonscan.FoldsTo(key, "model", "messages", "tools", "stream") && s.Skip()
	})
	return ok && s.End()
}
