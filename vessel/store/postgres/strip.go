package postgres

import (
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// StripTask is the default Options.Strip: it keeps the latest status, the
// user's text and the answer, and drops what the vessel never stores (the
// history sent in, images, streamed pieces, the transcript, files). The vessel
// passes its own function so that both stores keep exactly the same things.
func StripTask(t *a2a.Task) *a2a.Task {
	if t == nil {
		return nil
	}
	out := *t
	out.History = nil
	for _, m := range t.History {
		if m == nil || m.Role != a2a.MessageRoleUser {
			continue
		}
		var parts a2a.ContentParts
		for _, p := range m.Parts {
			if p == nil || p.MediaType != "" && !strings.HasPrefix(p.MediaType, "text/") {
				continue
			}
			if _, ok := p.Content.(a2a.Text); ok {
				parts = append(parts, p)
			}
		}
		if len(parts) == 0 {
			continue
		}
		cm := *m
		cm.Parts = parts
		out.History = append(out.History, &cm)
	}
	out.Artifacts = nil
	for _, a := range t.Artifacts {
		if isAnswer(a) {
			out.Artifacts = append(out.Artifacts, a)
		}
	}
	return &out
}

// isAnswer spots the answer artifact: named "answer" or carrying Markdown.
func isAnswer(a *a2a.Artifact) bool {
	if a == nil {
		return false
	}
	if strings.HasPrefix(strings.ToLower(a.Name), "answer") {
		return true
	}
	for _, p := range a.Parts {
		if p != nil && p.MediaType == "text/markdown" {
			return true
		}
	}
	return false
}
