package a2aserver_test

// Files, checked twice: the fake sandbox's "hostile" tool sends files that
// sandboxd would have refused, as a compromised sandbox could, and the
// vessel must refuse each one itself before it becomes an artifact.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"slices"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"

	sandboxv1 "github.com/astraldeep/astralvessel-go/proto/astralvessel/sandbox/v1"
	"github.com/astraldeep/astralvessel-go/runtime/outputfiles"
	"github.com/astraldeep/astralvessel-go/vessel/transcript"
)

// tinyPNG is a real one-pixel PNG.
func tinyPNG() []byte {
	var b bytes.Buffer
	_ = png.Encode(&b, image.NewGray(image.Rect(0, 0, 1, 1))) // into memory: cannot fail
	return b.Bytes()
}

// hostileFile is one file as a misbehaving sandbox sends it.
type hostileFile struct {
	name, mediaType string
	content         []byte
}

// hostileCases are what the "hostile" tool sends for each case; callID
// keeps names of parallel calls apart.
func hostileCases(callID string) map[string][]hostileFile {
	pngBytes := tinyPNG()
	csvBytes := []byte("a,b\n1,2\n")
	small := func(n int) []hostileFile {
		var out []hostileFile
		for i := 1; i <= n; i++ {
			out = append(out, hostileFile{fmt.Sprintf("%s-%d.csv", callID, i), "text/csv", csvBytes})
		}
		return out
	}
	// Four of these fit a turn's bytes (15,600,000); a fifth does not.
	big := func(n int) []hostileFile {
		var out []hostileFile
		for i := 1; i <= n; i++ {
			out = append(out, hostileFile{fmt.Sprintf("%s-big%d.csv", callID, i), "text/csv", bytes.Repeat([]byte("a\n"), 1_950_000)})
		}
		return out
	}
	return map[string][]hostileFile{
		"names": {
			{"../up.png", "image/png", pngBytes},
			{"dir/a.png", "image/png", pngBytes},
			{`dir\a.png`, "image/png", pngBytes},
			{".hidden.png", "image/png", pngBytes},
			{"tab\t.png", "image/png", pngBytes},
			{"new\nline.png", "image/png", pngBytes},
			{"caf\u00e9.png", "image/png", pngBytes},
			{strings.Repeat("a", 200) + ".png", "image/png", pngBytes},
			{"", "image/png", pngBytes},
			{"ok.png", "image/png", pngBytes},
			{"ok.csv", "text/csv", csvBytes},
		},
		"types": {
			{"page.png", "image/png", []byte("<!doctype html><script>alert(1)</script>")},
			{"page.svg", "image/svg+xml", []byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`)}, // svg is not in the manifest
			{"run.exe", "application/octet-stream", []byte("MZ")},
			{"noext", "text/csv", csvBytes},
			{"binary.csv", "text/csv", pngBytes},
			{"real.png", "text/html", pngBytes},        // kept, as image/png
			{"table.csv", "application/pdf", csvBytes}, // kept, as text/csv
		},
		"sizes": append([]hostileFile{
			{"huge.csv", "text/csv", bytes.Repeat([]byte("a\n"), outputfiles.MaxFileBytes/2+1)},
		}, small(6)...),
		"four": small(4),
		"big3": big(3),
		"big2": big(2),
	}
}

// sendHostileFiles streams one case's files.
func sendHostileFiles(stream grpc.ServerStreamingServer[sandboxv1.RunResponse], callID, name string) error {
	if name == "invalid-utf8" {
		return sendInvalidUTF8Name(stream)
	}
	files, ok := hostileCases(callID)[name]
	if !ok {
		return fmt.Errorf("no hostile case %q", name)
	}
	for _, f := range files {
		ev := &sandboxv1.RunResponse{Event: &sandboxv1.RunResponse_File{File: &sandboxv1.OutboxFile{
			Name: f.name, MediaType: f.mediaType, Content: f.content}}}
		if err := stream.Send(ev); err != nil {
			return fmt.Errorf("sending %q: %w", f.name, err)
		}
	}
	// A refusal sandboxd made reaches the model beside the vessel's own.
	return stream.Send(&sandboxv1.RunResponse{Event: &sandboxv1.RunResponse_Refused{Refused: &sandboxv1.RefusedFile{
		Name: "link.png", Reason: "it is not a regular file (symlink)"}}})
}

// sendInvalidUTF8Name sends a file whose name is not UTF-8. protobuf will
// not marshal such a string, so the event is built as valid bytes, patched,
// and sent as the unknown fields of an empty message.
func sendInvalidUTF8Name(stream grpc.ServerStreamingServer[sandboxv1.RunResponse]) error {
	wire, err := proto.Marshal(&sandboxv1.RunResponse{Event: &sandboxv1.RunResponse_File{File: &sandboxv1.OutboxFile{
		Name: "cafX.png", MediaType: "image/png", Content: tinyPNG()}}})
	if err != nil {
		return fmt.Errorf("marshalling: %w", err)
	}
	wire = bytes.Replace(wire, []byte("cafX.png"), []byte("caf\xe9.png"), 1)
	raw := &emptypb.Empty{}
	raw.ProtoReflect().SetUnknown(wire)
	if err := stream.SendMsg(raw); err != nil {
		return fmt.Errorf("sending a name that is not UTF-8: %w", err)
	}
	return nil
}

// fileTurn is what a caller and the model saw of one turn.
type fileTurn struct {
	files     map[string]string // artifact filename: media type
	attached  int               // file.attached events
	toolTexts []string          // the tool messages the model read
	state     a2a.TaskState
	answer    string
}

func runFileTurn(t *testing.T, h *harness, script string) fileTurn {
	t.Helper()
	evs, err := h.stream(as(h.keyApp1, "alice"), "field-guide", &a2a.SendMessageRequest{Message: textMsg("#script:" + script),
		Config: &a2a.SendMessageConfig{AcceptedOutputModes: []string{"text/markdown", transcript.MediaType, "image/png", "text/csv"}}})
	if err != nil {
		t.Fatal(err)
	}
	ft := fileTurn{files: map[string]string{}}
	var chunks [][]byte
	inTranscript := false
	for _, ev := range evs {
		switch e := ev.(type) {
		case *a2a.TaskArtifactUpdateEvent:
			switch {
			case e.Artifact.Name == "transcript" || (e.Append && inTranscript):
				inTranscript = true
				chunks = append(chunks, e.Artifact.Parts[0].Raw())
			case e.Artifact.Name == "file":
				p := e.Artifact.Parts[0]
				if _, dup := ft.files[p.Filename]; dup {
					t.Fatalf("%s: file %q sent twice", script, p.Filename)
				}
				ft.files[p.Filename] = p.MediaType
				inTranscript = false
			case e.Artifact.Name == "answer":
				ft.answer = e.Artifact.Parts[0].Text()
				inTranscript = false
			}
		case *a2a.TaskStatusUpdateEvent:
			ft.state = e.Status.State
			if eventOf(e)["type"] == "file.attached" {
				ft.attached++
			}
		}
	}
	for _, c := range chunks {
		env, err := transcript.Parse(c)
		if err != nil {
			t.Fatalf("%s: transcript: %v", script, err)
		}
		for _, m := range env.Messages {
			if m.Role != "tool" {
				continue
			}
			var text string
			if err := json.Unmarshal(m.Content, &text); err != nil {
				t.Fatalf("%s: tool message %s: %v", script, m.Content, err)
			}
			ft.toolTexts = append(ft.toolTexts, text)
		}
	}
	return ft
}

func (ft fileTurn) names() []string {
	var out []string
	for n := range ft.files {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// refusals counts "file refused" notes in the model's tool messages, and
// those giving reason.
func (ft fileTurn) refusals(reason string) (all, withReason int) {
	for _, text := range ft.toolTexts {
		for _, note := range strings.Split(text, "; ") {
			if _, after, ok := strings.Cut(note, "file refused: "); ok {
				all++
				if strings.Contains(after, reason) {
					withReason++
				}
			}
		}
	}
	return all, withReason
}

func TestVesselRechecksFiles(t *testing.T) {
	h := newHarness(t)
	for _, c := range []struct {
		script      string
		kept        []string
		refused     int    // refusals the vessel makes
		reason      string // given by every one of them
		sandboxSide int    // refusals sandboxd made, passed on
	}{
		{"hostile-names", []string{"ok.csv", "ok.png"}, 9, "the name must be 1 to 128", 1},
		{"hostile-types", []string{"real.png", "table.csv"}, 5, "", 1},
		{"hostile-sizes", []string{"z1-1.csv", "z1-2.csv", "z1-3.csv", "z1-4.csv"}, 3, "", 1},
		{"hostile-turn-count", nil, 4, outputfiles.PerTurnReason, 3},
		{"hostile-turn-bytes", nil, 1, outputfiles.PerTurnReason, 2},
	} {
		t.Run(c.script, func(t *testing.T) {
			before := h.logs.FilterMessage("file refused").Len()
			ft := runFileTurn(t, h, c.script)
			if ft.state != a2a.TaskStateCompleted || !strings.HasSuffix(ft.answer, "done") {
				t.Fatalf("the turn did not go on: state %s, answer %q", ft.state, ft.answer)
			}
			names := ft.names()
			if c.kept != nil && !slices.Equal(names, c.kept) {
				t.Fatalf("artifacts %q, want %q", names, c.kept)
			}
			if want := map[string]int{"hostile-turn-count": outputfiles.MaxPerTurn, "hostile-turn-bytes": 4}[c.script]; want > 0 && len(names) != want {
				t.Fatalf("%d artifacts %q, want %d", len(names), names, want)
			}
			if ft.attached != len(names) {
				t.Fatalf("%d file.attached events for %d artifacts", ft.attached, len(names))
			}
			all, withReason := ft.refusals(c.reason)
			if all != c.refused+c.sandboxSide || withReason < c.refused {
				t.Fatalf("the model read %d refusals (%d saying %q), want %d from the vessel and %d from sandboxd:\n%s",
					all, withReason, c.reason, c.refused, c.sandboxSide, strings.Join(ft.toolTexts, "\n"))
			}
			if logged := h.logs.FilterMessage("file refused").Len() - before; logged != c.refused {
				t.Fatalf("%d refusals logged, want %d", logged, c.refused)
			}
		})
	}
	t.Run("media types come from the content", func(t *testing.T) {
		ft := runFileTurn(t, h, "hostile-types")
		if ft.files["real.png"] != "image/png" || ft.files["table.csv"] != "text/csv" {
			t.Fatalf("media types %v", ft.files)
		}
		for _, reason := range []string{"the content is not a PNG image", `files of type "svg" are not allowed`,
			`files of type "exe" are not allowed`, "the name has no extension", "the content is not UTF-8 text"} {
			if _, n := ft.refusals(reason); n != 1 {
				t.Errorf("%d refusals say %q:\n%s", n, reason, strings.Join(ft.toolTexts, "\n"))
			}
		}
	})
	t.Run("sizes and counts", func(t *testing.T) {
		ft := runFileTurn(t, h, "hostile-sizes")
		if _, n := ft.refusals(fmt.Sprintf("it is larger than %d bytes", outputfiles.MaxFileBytes)); n != 1 {
			t.Errorf("the oversize file: %d refusals say so", n)
		}
		if _, n := ft.refusals(outputfiles.PerCallReason); n != 2 {
			t.Errorf("the fifth and sixth files of one call: %d refusals say so", n)
		}
	})
	t.Run("names are shown quoted", func(t *testing.T) {
		ft := runFileTurn(t, h, "hostile-names")
		text := strings.Join(ft.toolTexts, "\n")
		for _, shown := range []string{`"../up.png"`, `"new\nline.png"`, `"tab\t.png"`, "\"caf\u00e9.png\""} {
			if !strings.Contains(text, "file refused: "+shown+": ") {
				t.Errorf("no refusal of %s in:\n%s", shown, text)
			}
		}
	})
	t.Run("a name that is not UTF-8", func(t *testing.T) {
		// protobuf itself rejects the event, failing that one call; the
		// turn goes on and the other call's files still come.
		ft := runFileTurn(t, h, "hostile-utf8")
		if ft.state != a2a.TaskStateCompleted {
			t.Fatalf("state %s", ft.state)
		}
		if names := ft.names(); !slices.Equal(names, []string{"data.csv", "plot.png"}) {
			t.Fatalf("artifacts %q", names)
		}
		failed := 0
		for _, text := range ft.toolTexts {
			if strings.HasPrefix(text, "error: the tool call failed") {
				failed++
			}
		}
		if failed != 1 {
			t.Fatalf("%d failed calls:\n%s", failed, strings.Join(ft.toolTexts, "\n"))
		}
	})
}
