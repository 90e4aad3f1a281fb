package primitives

// The 38 AstralPrimitives wire types and their fields, as the strict wire
// schema sees them: every field that is not optional is required on the
// wire. The model must supply the fields marked req; the vessel fills the
// ones with a default; opt fields may be left out (and an explicit null for
// them is dropped, since the wire schema refuses nulls).

type kind int

const (
	kStr       kind = iota
	kInt            // a whole number (2.0 accepted: numbers may pass through protobuf)
	kNum            // any finite number
	kBool           //
	kChildren       // a list of components
	kButtons        // a list of button components
	kObj            // an object with any JSON values
	kStrMap         // an object of strings
	kStrList        // a list of strings
	kNumList        // a list of numbers
	kIntList        // a list of whole numbers
	kRows           // a list of lists of any JSON values
	kStrOrObjs      // a list of strings or objects
	kObjList        // a list of objects
	kTabs           // a list of tab_item {label, content, [value]}
)

var kindNames = map[kind]string{
	kStr: "a string", kInt: "a whole number", kNum: "a number", kBool: "true or false",
	kChildren: "a list of components", kButtons: "a list of button components", kObj: "an object",
	kStrMap: "an object of strings", kStrList: "a list of strings", kNumList: "a list of numbers",
	kIntList: "a list of whole numbers", kRows: "a list of rows (each a list)",
	kStrOrObjs: "a list of strings or objects", kObjList: "a list of objects",
	kTabs: `a list of tabs ({"label", "content": [components]})`,
}

type presence int

const (
	required  presence = iota // the model must give it
	defaulted                 // filled with def when absent
	optional                  // may be absent
)

type field struct {
	name string
	kind kind
	pres presence
	def  func() any
	enum []string // allowed string values, when the protocol lists them
	unit bool     // a number on the 0–1 scale
}

func req(name string, k kind) field { return field{name: name, kind: k, pres: required} }
func opt(name string, k kind) field { return field{name: name, kind: k, pres: optional} }

func dstr(name, v string) field {
	return field{name: name, kind: kStr, pres: defaulted, def: func() any { return v }}
}
func dint(name string, v float64) field {
	return field{name: name, kind: kInt, pres: defaulted, def: func() any { return v }}
}
func dbool(name string, v bool) field {
	return field{name: name, kind: kBool, pres: defaulted, def: func() any { return v }}
}
func dlist(name string, k kind) field {
	return field{name: name, kind: k, pres: defaulted, def: func() any { return []any{} }}
}
func dobj(name string) field {
	return field{name: name, kind: kObj, pres: defaulted, def: func() any { return map[string]any{} }}
}

func (f field) oneOf(v ...string) field { f.enum = v; return f }
func (f field) scale01() field          { f.unit = true; return f }

// common fields every primitive may carry.
var common = []field{opt("css", kStrMap), opt("id", kStr), opt("class", kStr), opt("tooltip", kStr)}

// types maps each wire type to its fields, in wire order.
var types = map[string][]field{
	// Layout
	"container":   {req("children", kChildren), opt("direction", kStr)},
	"card":        {dstr("title", ""), req("content", kChildren), dstr("variant", "default")},
	"grid":        {dint("columns", 2), req("children", kChildren), dint("gap", 20)},
	"tabs":        {req("tabs", kTabs), dstr("variant", "default")},
	"collapsible": {req("title", kStr), req("content", kChildren), dbool("default_open", false)},
	"divider":     {dstr("variant", "solid")},
	// Content
	"text":         {req("content", kStr), dstr("variant", "body").oneOf("h1", "h2", "h3", "body", "caption")},
	"button":       {req("label", kStr), req("action", kStr), dobj("payload"), dstr("variant", "primary")},
	"action_group": {req("buttons", kButtons), dstr("align", "start").oneOf("start", "center", "end", "between"), opt("label", kStr)},
	"input":        {dstr("placeholder", ""), req("name", kStr), dstr("value", "")},
	"param_picker": {req("title", kStr), dstr("description", ""), req("fields", kObjList), dstr("submit_label", "Submit"), dstr("submit_message_template", "")},
	"image":        {req("url", kStr), opt("alt", kStr), opt("width", kStr), opt("height", kStr)},
	"code":         {req("code", kStr), dstr("language", "text"), dbool("show_line_numbers", false)},
	"alert":        {req("message", kStr), dstr("variant", "info").oneOf("info", "success", "warning", "error"), opt("title", kStr)},
	"progress":     {req("value", kNum).scale01(), opt("label", kStr), dstr("variant", "default"), dbool("show_percentage", true)},
	"metric":       {req("title", kStr), req("value", kStr), opt("subtitle", kStr), opt("icon", kStr), dstr("variant", "default"), opt("progress", kNum).scale01()},
	"list":         {req("items", kStrOrObjs), dbool("ordered", false), dstr("variant", "default")},
	"table": {req("headers", kStrList), req("rows", kRows), dstr("variant", "default"), opt("total_rows", kInt), opt("page_size", kInt),
		opt("page_offset", kInt), dlist("page_sizes", kIntList), opt("source_tool", kStr), opt("source_agent", kStr), dobj("source_params")},
	// Charts
	"bar_chart":    {dstr("title", ""), req("labels", kStrList), req("datasets", kObjList)},
	"line_chart":   {dstr("title", ""), req("labels", kStrList), req("datasets", kObjList)},
	"pie_chart":    {dstr("title", ""), req("labels", kStrList), req("data", kNumList), dlist("colors", kStrList)},
	"donut_chart":  {dstr("title", ""), req("labels", kStrList), req("data", kNumList), opt("center_label", kStr), opt("center_value", kStr)},
	"radar_chart":  {dstr("title", ""), req("axes", kStrList), req("datasets", kObjList), opt("max_value", kNum)},
	"plotly_chart": {dstr("title", ""), req("data", kObjList), dobj("layout"), dobj("config")},
	// Media and input/output
	"audio": {req("src", kStr), opt("contentType", kStr), dbool("autoplay", false), dbool("loop", false), opt("label", kStr),
		dbool("showControls", true), opt("description", kStr)},
	"file_upload":   {dstr("label", "Upload File"), dstr("accept", "*/*"), req("action", kStr)},
	"file_download": {dstr("label", "Download File"), req("url", kStr), opt("filename", kStr)},
	// Dashboard
	"badge":            {req("label", kStr), dstr("variant", "default"), opt("icon", kStr)},
	"hero":             {req("title", kStr), opt("subtitle", kStr), opt("eyebrow", kStr), opt("icon", kStr), dstr("variant", "default"), dlist("badges", kStrList)},
	"keyvalue":         {opt("title", kStr), req("items", kObjList), dint("columns", 2)},
	"timeline":         {opt("title", kStr), req("items", kObjList), dstr("variant", "default")},
	"stat_group":       {opt("title", kStr), req("items", kObjList), dint("columns", 4)},
	"gauge":            {req("label", kStr), req("value", kNum).scale01(), opt("display_value", kStr), dlist("thresholds", kObjList), opt("subtitle", kStr)},
	"pipeline_stepper": {opt("title", kStr), req("steps", kObjList), dstr("orientation", "horizontal")},
	"rating":           {req("value", kNum), dint("max_value", 5), opt("label", kStr), opt("subtitle", kStr), dbool("show_value", true)},
	"chat_history":     {dstr("title", "Recent chats"), req("items", kObjList)},
	// Theming
	"color_picker": {req("label", kStr), req("color_key", kStr), dstr("value", "#000000")},
	"theme_apply":  {opt("preset", kStr), opt("colors", kStrMap), opt("color_key", kStr), opt("color_value", kStr), req("message", kStr)},
}

// typeOrder lists the wire types grouped as the protocol groups them, for
// the present tool's description and for error hints.
var typeOrder = []string{
	"container", "card", "grid", "tabs", "collapsible", "divider",
	"text", "button", "action_group", "input", "param_picker", "image", "code", "alert", "progress", "metric", "list", "table",
	"bar_chart", "line_chart", "pie_chart", "donut_chart", "radar_chart", "plotly_chart",
	"audio", "file_upload", "file_download",
	"badge", "hero", "keyvalue", "timeline", "stat_group", "gauge", "pipeline_stepper", "rating", "chat_history",
	"color_picker", "theme_apply",
}

// Types returns the 38 wire type names.
func Types() []string { return append([]string(nil), typeOrder...) }
