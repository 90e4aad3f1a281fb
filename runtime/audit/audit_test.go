package audit

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/astraldeep/astralvessel-go/runtime/rotlog"
)

// CheckEvent reports what an OCSF event (decoded JSON) lacks of the
// fields every event here must carry; tests of the three services use it.
func checkEvent(t *testing.T, m map[string]any, class int) {
	t.Helper()
	num := func(k string) int {
		v, ok := m[k].(float64)
		if !ok {
			t.Fatalf("event lacks numeric %s: %v", k, m)
		}
		return int(v)
	}
	if num("class_uid") != class {
		t.Fatalf("class_uid %v, want %d", m["class_uid"], class)
	}
	if num("category_uid") != class/1000 {
		t.Errorf("category_uid %v for class %d", m["category_uid"], class)
	}
	if num("type_uid") != class*100+num("activity_id") {
		t.Errorf("type_uid %v", m["type_uid"])
	}
	if num("time") <= 0 || num("severity_id") < 1 {
		t.Errorf("time or severity: %v", m)
	}
	md, _ := m["metadata"].(map[string]any)
	pr, _ := md["product"].(map[string]any)
	if md["version"] != SchemaVersion || pr["name"] != ProductName || pr["vendor_name"] != VendorName || pr["version"] == "" {
		t.Errorf("metadata: %v", md)
	}
}

// TestEventsToFile: each class's event goes to a real file as one line of
// JSON with the required OCSF fields, and the task id as correlation_uid.
func TestEventsToFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	w, err := Open(path, "test", "v1.2.3", rotlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	events := []*Event{
		APIActivity(&APICall{Operation: "SendMessage", ActivityID: APICreate, Start: t0, End: t0.Add(time.Second), Owner: "app1/ann", App: "app1",
			Remote: "10.0.0.1:5000", HTTPMethod: "POST", Path: "/agents/a/a2a", Agent: "a", Task: "task-1", HTTPStatus: 200}),
		APIActivity(&APICall{Operation: "unknown", ActivityID: APIOther, Start: t0, End: t0, Remote: "[::1]:1", Agent: "a", HTTPStatus: 401,
			Error: "missing bearer token", ErrorCode: "unauthenticated"}),
		ProcessActivity(&ProcessCall{Tool: "bash", CallID: "c1", Turn: "task-1", Task: "task-1", Owner: "app1/ann", Agent: "a", Pid: 42, UID: 70001,
			Start: t0, End: t0.Add(time.Millisecond), Exit: "stopped", Code: -1, Stopped: "timeout"}),
		NetworkActivity(&Decision{Allow: false, Reason: "private", Method: "CONNECT", Remote: "172.20.0.2:4000", Host: "10.1.1.1", IP: "10.1.1.1", Port: 443, Task: "task-1", Kind: "proxy", Time: t0}),
		NetworkActivity(&Decision{Allow: true, Reason: "public", Method: "GET", Host: "example.org", Port: 80, Task: "task-1", Kind: "proxy", Time: t0}),
	}
	for _, e := range events {
		if err := w.Emit(e); err != nil {
			t.Fatal(err)
		}
	}
	_ = w.Close()
	f, _ := os.Open(path)
	defer f.Close()
	sc := bufio.NewScanner(f)
	var got []map[string]any
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		got = append(got, m)
	}
	if len(got) != len(events) {
		t.Fatalf("%d lines", len(got))
	}
	for i, class := range []int{6003, 6003, 1007, 4001, 4001} {
		checkEvent(t, got[i], class)
	}
	f.Seek(0, 0)
	sc = bufio.NewScanner(f)
	for sc.Scan() {
		if _, err := Validate(sc.Bytes()); err != nil {
			t.Errorf("Validate: %v", err)
		}
	}
	corr := func(m map[string]any) any { return m["metadata"].(map[string]any)["correlation_uid"] }
	for _, i := range []int{0, 2, 3, 4} {
		if corr(got[i]) != "task-1" {
			t.Errorf("event %d: correlation_uid %v", i, corr(got[i]))
		}
	}
	if got[1]["status_id"].(float64) != StatusFailure || got[1]["severity_id"].(float64) != SeverityMedium ||
		got[1]["actor"].(map[string]any)["user"].(map[string]any)["name"] != "unauthenticated" {
		t.Errorf("refusal: %v", got[1])
	}
	if got[3]["activity_id"].(float64) != NetworkRefuse || got[3]["disposition_id"].(float64) != 2 || got[4]["activity_id"].(float64) != NetworkOpen {
		t.Errorf("decisions: %v / %v", got[3], got[4])
	}
	if got[0]["metadata"].(map[string]any)["uid"] == got[1]["metadata"].(map[string]any)["uid"] {
		t.Error("two events share a uid")
	}
	var nilW *Writer
	if err := nilW.Emit(events[0]); err != nil {
		t.Fatal(err)
	}
}

func TestValidateRefuses(t *testing.T) {
	for _, bad := range []string{
		`not json`,
		`{"class_uid":6003}`,
		`{"class_uid":6003,"category_uid":6,"activity_id":1,"type_uid":600302,"time":1,"severity_id":1,"metadata":{}}`,
		`{"class_uid":9999,"category_uid":9,"activity_id":1,"type_uid":999901,"time":1,"severity_id":1,"metadata":{"version":"1","product":{"name":"a","vendor_name":"b","version":"c"}}}`,
		`{"class_uid":4001,"category_uid":4,"activity_id":1,"type_uid":400101,"time":1,"severity_id":1,"metadata":{"version":"1","product":{"name":"a","vendor_name":"b","version":"c"}}}`,
	} {
		if _, err := Validate([]byte(bad)); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}

func FuzzValidate(f *testing.F) {
	f.Add([]byte(`{"class_uid":4001,"category_uid":4,"activity_id":1,"type_uid":400101,"time":1,"severity_id":1,"metadata":{}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := Validate(b)
		if err == nil && e.TypeUID != e.ClassUID*100+e.ActivityID {
			t.Fatal("accepted a wrong type_uid")
		}
	})
}
