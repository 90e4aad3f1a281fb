// AstralVessel patch benchmark (see third_party/a2a-go/PATCHES.md).

package utils_test

import (
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
	"github.com/a2aproject/a2a-go/v2/internal/utils"
)

// benchTask is a task as the vessel's task manager copies it mid-turn:
// the user's text in the history, a working status whose message carries
// a turn event as a data part, event metadata, one finished artifact.
func benchTask() *taskstore.StoredTask {
	ts := time.Now()
	user := &a2a.Message{ID: "m1", Role: a2a.MessageRoleUser, TaskID: "t1", ContextID: "c1",
		Parts: a2a.ContentParts{a2a.NewTextPart(strings.Repeat("please summarise the file ", 8))}}
	status := &a2a.Message{ID: "m2", Role: a2a.MessageRoleAgent, TaskID: "t1", ContextID: "c1",
		Parts: a2a.ContentParts{a2a.NewDataPart(map[string]any{"type": "text.delta", "step": 2.0,
			"text": strings.Repeat("lorem ipsum ", 20)})}}
	art := &a2a.Artifact{ID: "a1", Name: "answer", Parts: a2a.ContentParts{a2a.NewTextPart(strings.Repeat("x", 512))}}
	return &taskstore.StoredTask{Version: 7, Task: &a2a.Task{ID: "t1", ContextID: "c1",
		History:   []*a2a.Message{user},
		Artifacts: []*a2a.Artifact{art},
		Metadata:  map[string]any{"vessel.event": "text.delta"},
		Status:    a2a.TaskStatus{State: a2a.TaskStateWorking, Message: status, Timestamp: &ts},
	}}
}

// BenchmarkTaskCopy: one copy of benchTask by the unpatched SDK (a fresh
// gob encoder and decoder), by the pooled gob pair (the first patch), and
// by DeepCopy now (the hand copy).
func BenchmarkTaskCopy(b *testing.B) {
	st := benchTask()
	b.Run("gob-fresh", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := gobRoundTrip(st); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("gob-pooled", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := utils.GobCopyForTest(st); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("hand", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := utils.DeepCopy(st); err != nil {
				b.Fatal(err)
			}
		}
	})
}
