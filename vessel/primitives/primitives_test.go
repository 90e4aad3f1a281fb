package primitives

import (
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
)

// wireRequired is the strict wire schema's required keys per type (every
// non-Optional field), written out independently of types.go as a cross
// check.
var wireRequired = map[string]string{
	"container": "children", "card": "title content variant", "grid": "columns children gap",
	"tabs": "tabs variant", "collapsible": "title content default_open", "divider": "variant",
	"text": "content variant", "button": "label action payload variant", "action_group": "buttons align",
	"input": "placeholder name value", "param_picker": "title description fields submit_label submit_message_template",
	"image": "url", "code": "code language show_line_numbers", "alert": "message variant",
	"progress": "value variant show_percentage", "metric": "title value variant", "list": "items ordered variant",
	"table": "headers rows variant page_sizes source_params", "bar_chart": "title labels datasets",
	"line_chart": "title labels datasets", "pie_chart": "title labels data colors", "donut_chart": "title labels data",
	"radar_chart": "title axes datasets", "plotly_chart": "title data layout config",
	"audio": "src autoplay loop showControls", "file_upload": "label accept action", "file_download": "label url",
	"badge": "label variant", "hero": "title variant badges", "keyvalue": "items columns", "timeline": "items variant",
	"stat_group": "items columns", "gauge": "label value thresholds", "pipeline_stepper": "steps orientation",
	"rating": "value max_value show_value", "chat_history": "items", "color_picker": "label color_key value",
	"theme_apply": "message",
}

// checkWire walks normalized output and checks the strict wire rules:
// registered type, all required keys, no null for declared fields.
func checkWire(t *testing.T, path string, v any) {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%s: not an object", path)
	}
	typ, _ := m["type"].(string)
	reqs, ok := wireRequired[typ]
	if !ok {
		t.Fatalf("%s: unregistered type %q", path, typ)
	}
	for _, k := range strings.Fields(reqs) {
		if _, ok := m[k]; !ok {
			t.Errorf("%s: %s lacks required wire key %q", path, typ, k)
		}
	}
	for k, x := range m {
		if x == nil {
			t.Errorf("%s.%s: null on the wire", path, k)
		}
	}
	nested := map[string]string{"container": "children", "grid": "children", "card": "content",
		"collapsible": "content", "action_group": "buttons"}
	if k, ok := nested[typ]; ok {
		if l, ok := m[k].([]any); ok {
			for i, c := range l {
				checkWire(t, path+"."+k+"["+itoa(i)+"]", c)
			}
		}
	}
	if tabs, ok := m["tabs"].([]any); ok && typ == "tabs" {
		for _, tb := range tabs {
			for i, c := range tb.(map[string]any)["content"].([]any) {
				checkWire(t, path+".tabs.content["+itoa(i)+"]", c)
			}
		}
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func TestTypesTableMatchesWire(t *testing.T) {
	if len(types) != 38 || len(typeOrder) != 38 || len(wireRequired) != 38 {
		t.Fatalf("types: %d, order: %d, wire: %d; want 38", len(types), len(typeOrder), len(wireRequired))
	}
	for _, typ := range typeOrder {
		var got []string
		for _, f := range types[typ] {
			if f.pres != optional {
				got = append(got, f.name)
			}
		}
		want := strings.Fields(wireRequired[typ])
		if typ == "chat_history" {
			want = append([]string{"title"}, want...) // Optional with a default that is always emitted
		}
		if !sameSet(got, want) {
			t.Errorf("%s: non-optional fields %v, wire requires %v", typ, got, want)
		}
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	m := map[string]bool{}
	for _, x := range a {
		m[x] = true
	}
	for _, x := range b {
		if !m[x] {
			return false
		}
	}
	return true
}

func TestMinimalFillsDefaults(t *testing.T) {
	raw, _ := os.ReadFile("testdata/minimal.json")
	got, err := Parse(raw, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	wantRaw, _ := os.ReadFile("testdata/minimal_want.json")
	var want any
	if err := json.Unmarshal(wantRaw, &want); err != nil {
		t.Fatal(err)
	}
	gb, _ := json.Marshal(got)
	var gotRound any
	_ = json.Unmarshal(gb, &gotRound)
	if !reflect.DeepEqual(gotRound, want) {
		t.Fatalf("got  %s\nwant %s", gb, wantRaw)
	}
}

func TestDashboardFixture(t *testing.T) {
	raw, _ := os.ReadFile("testdata/dashboard.json")
	got, err := Parse(raw, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range got {
		checkWire(t, "components["+itoa(i)+"]", c)
	}
	// Normalized output validates again and is unchanged (idempotent).
	again, err := Validate(got, Limits{})
	if err != nil {
		t.Fatalf("normalized output fails validation: %v", err)
	}
	if !reflect.DeepEqual(again, got) {
		t.Fatal("normalizing twice changed the output")
	}
	alert := got[6].(map[string]any)
	if _, ok := alert["title"]; ok {
		t.Fatal("explicit null for an optional field must be dropped")
	}
	grid := got[1].(map[string]any)
	if grid["columns"] != 3.0 || grid["gap"] != 20.0 {
		t.Fatalf("grid = %v", grid)
	}
	extra := got[len(got)-1].(map[string]any)
	if _, ok := extra["x-note"]; !ok {
		t.Fatal("unknown keys must pass through")
	}
	b, err := EnvelopeJSON(got)
	if err != nil || !strings.HasPrefix(string(b), `{"_data":null,"_ui_components":[`) {
		t.Fatalf("envelope = %.80s (%v)", b, err)
	}
}

func TestEveryTypeMinimal(t *testing.T) {
	// The smallest input of each type: only the fields the model must give.
	sample := map[kind]any{
		kStr: "x", kInt: 1, kNum: 0.5, kBool: true, kChildren: []any{map[string]any{"type": "divider"}},
		kButtons: []any{map[string]any{"type": "button", "label": "b", "action": "a"}}, kObj: map[string]any{},
		kStrMap: map[string]any{"a": "b"}, kStrList: []any{"a"}, kNumList: []any{1.0}, kIntList: []any{1.0},
		kRows: []any{[]any{"a", 1.0}}, kStrOrObjs: []any{"a"}, kObjList: []any{map[string]any{"a": 1.0}},
		kTabs: []any{map[string]any{"label": "t", "content": []any{}}},
	}
	for _, typ := range typeOrder {
		c := map[string]any{"type": typ}
		for _, f := range types[typ] {
			if f.pres == required {
				c[f.name] = sample[f.kind]
			}
		}
		got, err := Validate([]any{c}, Limits{})
		if err != nil {
			t.Errorf("%s minimal: %v", typ, err)
			continue
		}
		checkWire(t, typ, got[0])
	}
}

func TestInvalid(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{"components": [{"type":"text","content":"a"},{"type":"text","content":"b"},{"type":"card","title":"t","content":[{"type":"text"}]}]}`,
			`components[2].content[0]: text requires "content" (a string)`},
		{`{"components": [{"content":"a"}]}`, `components[0]: component needs a "type"`},
		{`{"components": [{"type":"chart"}]}`, `components[0].type: unknown type "chart"; use one of: container, card`},
		{`{"components": [{"type":7}]}`, `components[0].type: must be a non-empty string`},
		{`{"components": ["hello"]}`, `components[0]: must be a component object`},
		{`{"components": []}`, `the list is empty`},
		{`{"components": {"type":"text"}}`, `components: must be a list`},
		{`{"comps": []}`, `need "components"`},
		{`"text"`, `must be an object`},
		{`{"components": [{"type":"metric","title":"t","value":62}]}`, `components[0].value: must be a string, got the number 62`},
		{`{"components": [{"type":"progress","value":62}]}`, `components[0].value: must be between 0 and 1`},
		{`{"components": [{"type":"grid","columns":2.5,"children":[]}]}`, `components[0].columns: must be a whole number`},
		{`{"components": [{"type":"text","content":"a","variant":"huge"}]}`, `"huge" is not allowed for text; use one of: h1, h2, h3, body, caption`},
		{`{"components": [{"type":"table","headers":["a"],"rows":[["x", 1e400]]}]}`, `components[0].rows[0][1]: number 1e400 is out of range`},
		{`{"components": [{"type":"pie_chart","labels":["a"],"data":[-1e309]}]}`, `components[0].data[0]: number -1e309 is out of range`},
		{`{"components": [{"type":"table","headers":["a"],"rows":["x"]}]}`, `components[0].rows[0]: each row must be a list`},
		{`{"components": [{"type":"action_group","buttons":[{"type":"text","content":"x"}]}]}`, `components[0].buttons[0]: action_group buttons must be components of type "button"`},
		{`{"components": [{"type":"tabs","tabs":[{"label":"a","content":[],"icon":"x"}]}]}`, `components[0].tabs[0].icon: unknown tab key`},
		{`{"components": [{"type":"tabs","tabs":[{"content":[{"type":"nope"}]}]}]}`, `components[0].tabs[0].content[0].type: unknown type "nope"`},
		{`{"components": [{"type":"text","content":null}]}`, `text requires "content" (a string), not null`},
		{`{"components": [{"type":"text","content":"a","attributes":{"type":"x"}}]}`, `components[0].attributes: not allowed`},
		{`{"components": [{"type":"container","css":{"gap":4},"children":[]}]}`, `components[0].css.gap: must be a string`},
		{`{"components": [{"type":"collapsible","title":"t","content":[{"type":"container","children":[{"type":"card","content":[{"type":"badge"}]}]}]}]}`,
			`components[0].content[0].children[0].content[0]: badge requires "label"`},
		{`{"components": [{"type":"text","content":"a"}]} trailing`, `trailing data`},
		{`{"components": [{"type":"text","content":"a"}]`, `arguments must be JSON`},
	}
	for _, c := range cases {
		_, err := Parse([]byte(c.in), Limits{})
		if err == nil {
			t.Errorf("accepted %s", c.in)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("input %s\n error %v\n want  %q", c.in, err, c.want)
		}
	}
}

func TestSeveralErrorsAtOnce(t *testing.T) {
	_, err := Parse([]byte(`{"components": [{"type":"text"},{"type":"badge"},{"type":"image"}]}`), Limits{})
	var ve *ValidationError
	if !errors.As(err, &ve) || len(ve.Problems) != 3 {
		t.Fatalf("want 3 problems, got %v", err)
	}
}

func TestCaps(t *testing.T) {
	// Depth.
	deep := `{"type":"text","content":"x"}`
	for i := 0; i < 20; i++ {
		deep = `{"type":"container","children":[` + deep + `]}`
	}
	if _, err := Parse([]byte(`{"components":[`+deep+`]}`), Limits{}); err == nil || !strings.Contains(err.Error(), "nested too deeply") {
		t.Fatalf("depth: %v", err)
	}
	// Count.
	many := strings.Repeat(`{"type":"divider"},`, 600)
	if _, err := Parse([]byte(`{"components":[`+many+`{"type":"divider"}]}`), Limits{}); err == nil || !strings.Contains(err.Error(), "too many components") {
		t.Fatalf("count: %v", err)
	}
	// Bytes.
	big := `{"components":[{"type":"text","content":"` + strings.Repeat("a", 2<<20) + `"}]}`
	if _, err := Parse([]byte(big), Limits{}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("bytes: %v", err)
	}
	// JSON nesting inside a free-form value.
	nest := strings.Repeat("[", 100) + strings.Repeat("]", 100)
	if _, err := Parse([]byte(`{"components":[{"type":"button","label":"a","action":"b","payload":{"x":`+nest+`}}]}`), Limits{}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("json depth: %v", err)
	}
	// Error count is capped.
	bad := strings.Repeat(`{"type":"text"},`, 50)
	_, err := Parse([]byte(`{"components":[`+bad+`{"type":"text"}]}`), Limits{})
	var ve *ValidationError
	if !errors.As(err, &ve) || len(ve.Problems) != DefaultLimits.MaxErrors || !ve.Truncated {
		t.Fatalf("error cap: %v", err)
	}
}

func TestEnvelope(t *testing.T) {
	env := Envelope(nil)
	if env["_data"] != nil || env["_ui_components"] == nil || len(env["_ui_components"].([]any)) != 0 {
		t.Fatalf("envelope = %v", env)
	}
}

func TestToolDefinition(t *testing.T) {
	d := Description()
	for _, typ := range typeOrder {
		if !strings.Contains(d, "- "+typ+":") {
			t.Errorf("description lacks %s", typ)
		}
	}
	b, err := json.Marshal(Parameters())
	if err != nil || !strings.Contains(string(b), `"required":["components"]`) {
		t.Fatalf("parameters = %s %v", b, err)
	}
}

func FuzzParse(f *testing.F) {
	for _, name := range []string{"testdata/dashboard.json", "testdata/minimal.json"} {
		b, _ := os.ReadFile(name)
		f.Add(b)
	}
	f.Add([]byte(`{"components":[{"type":"tabs","tabs":[{"label":"a","content":[{"type":"text","content":"x"}]}]}]}`))
	f.Add([]byte(`[{"type":"rating","value":1e999}]`))
	f.Add([]byte(`{"type":"text","content":"x"}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		out, err := Parse(raw, Limits{})
		if err != nil {
			return
		}
		// Whatever passes is strict-wire shaped and re-validates unchanged.
		for _, c := range out {
			checkWire(t, "c", c)
		}
		if _, err := json.Marshal(Envelope(out)); err != nil {
			t.Fatalf("accepted output does not encode: %v", err)
		}
		again, err := Validate(out, Limits{})
		if err != nil || !reflect.DeepEqual(again, out) {
			t.Fatalf("not idempotent: %v", err)
		}
	})
}
