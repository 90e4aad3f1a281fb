package audit

import (
	"os"
	"runtime/debug"
	"strconv"
	"time"
)

// API Activity activity ids.
const (
	APICreate = 1
	APIRead   = 2
	APIUpdate = 3
	APIDelete = 4
	APIOther  = 99
)

var apiActivityNames = map[int]string{APICreate: "Create", APIRead: "Read", APIUpdate: "Update", APIDelete: "Delete", APIOther: "Other"}

// APICall is one A2A call, as the vessel saw it.
type APICall struct {
	Operation  string // the A2A method (SendMessage, GetTask, ...), or "unknown" when refused before it was read
	ActivityID int    // APICreate, APIRead, APIUpdate, APIDelete or APIOther
	Start, End time.Time
	// Owner is the authenticated caller (<app>/<user>, <issuer>|<subject>),
	// App its app or issuer id; both empty when authentication failed.
	Owner, App string
	Remote     string // the caller's address (host:port)
	HTTPMethod string
	Path       string
	UserAgent  string
	Agent      string
	Task       string // the task the call is about or created, when known
	HTTPStatus int
	// Error is the refusal or error, empty on success; ErrorCode its
	// short code (the HTTP or JSON-RPC error).
	Error, ErrorCode string
}

// APIActivity is the API Activity event (class 6003) of c.
func APIActivity(c *APICall) *Event {
	act := c.ActivityID
	if apiActivityNames[act] == "" {
		act = APIOther
	}
	e := &Event{ActivityID: act, ActivityName: apiActivityNames[act], CategoryUID: CategoryApplication, ClassUID: ClassAPIActivity,
		Time: c.End.UnixMilli(), StartTime: c.Start.UnixMilli(), Duration: c.End.Sub(c.Start).Milliseconds(),
		SeverityID: SeverityInformational, StatusID: StatusSuccess,
		API: &API{Operation: c.Operation, Version: "1.0", Service: &Service{Name: "a2a"},
			Response: &APIResponse{Code: c.HTTPStatus, Error: c.ErrorCode, Message: c.Error}},
		HTTPRequest: &HTTPRequest{HTTPMethod: c.HTTPMethod, URL: &URL{Path: c.Path}, UserAgent: c.UserAgent},
		SrcEndpoint: EndpointOf(c.Remote),
		DstEndpoint: &Endpoint{SvcName: "vessel"},
		Resources:   []Resource{{Type: "agent", UID: c.Agent}},
	}
	e.Metadata.CorrelationUID = c.Task
	if c.Task != "" {
		e.Resources = append(e.Resources, Resource{Type: "task", UID: c.Task})
	}
	if c.Owner != "" {
		e.Actor = &Actor{User: &User{Name: c.Owner, UID: c.Owner, TypeID: 1, Type: "User"}, AppName: c.App}
	} else {
		e.Actor = &Actor{User: &User{Name: "unauthenticated", TypeID: 0, Type: "Unknown"}}
	}
	if c.Error != "" || c.HTTPStatus >= 400 {
		e.StatusID, e.SeverityID = StatusFailure, SeverityLow
		e.StatusCode, e.StatusDetail = c.ErrorCode, c.Error
		if c.HTTPStatus == 401 || c.HTTPStatus == 403 {
			e.SeverityID = SeverityMedium
		}
	}
	return e
}

// Process Activity activity ids.
const (
	ProcessLaunch = 1
)

// ProcessCall is one confined call, as sandboxd ran it.
type ProcessCall struct {
	Tool       string // the tool (the process's name)
	CallID     string
	Turn, Task string
	Owner      string
	Agent      string
	Pid        int    // 0 for the tools sandboxd runs in-process (read, list, glob)
	UID        uint32 // the turn's uid the call ran as (0: none)
	Start, End time.Time
	Exit       string // ok, nonzero, stopped, error
	Code       int32
	Stopped    string // the stop reason, when stopped
	Error      string
}

// ProcessActivity is the Process Activity event (class 1007) of c.
func ProcessActivity(c *ProcessCall) *Event {
	code := c.Code
	e := &Event{ActivityID: ProcessLaunch, ActivityName: "Launch", CategoryUID: CategorySystem, ClassUID: ClassProcessActivity,
		Time: c.End.UnixMilli(), StartTime: c.Start.UnixMilli(), Duration: c.End.Sub(c.Start).Milliseconds(),
		SeverityID: SeverityInformational, StatusID: StatusSuccess, StatusCode: c.Exit,
		Actor:    &Actor{User: &User{Name: c.Owner, UID: c.Owner, TypeID: 1, Type: "User"}, AppName: c.Agent},
		Device:   hostDevice(),
		Process:  &Process{Pid: c.Pid, Name: c.Tool, UID: c.CallID, CreatedTime: c.Start.UnixMilli()},
		ExitCode: &code,
		Unmapped: map[string]any{"turn": c.Turn, "agent": c.Agent},
	}
	if c.UID != 0 {
		e.Process.User = &User{UID: strconv.FormatUint(uint64(c.UID), 10), TypeID: 99, Type: "Other"}
	}
	e.Metadata.CorrelationUID = c.Task
	switch c.Exit {
	case "ok":
	case "nonzero":
		e.StatusDetail = "exited with a non-zero code"
	default:
		e.StatusID, e.SeverityID = StatusFailure, SeverityLow
		e.StatusDetail = c.Error
		if c.Stopped != "" {
			e.StatusDetail = "stopped: " + c.Stopped
		}
	}
	return e
}

// Network Activity activity ids.
const (
	NetworkOpen   = 1
	NetworkFail   = 4
	NetworkRefuse = 5
)

// Decision is one egress decision.
type Decision struct {
	Allow    bool
	Failed   bool   // allowed by the policy but the connection or lookup failed
	Reason   string // the policy's reason or the failure kind
	Method   string // CONNECT or the HTTP method
	Remote   string // the caller (host:port)
	Host     string // the destination host as asked
	IP       string // the address dialled (or refused)
	Port     int
	Task     string
	Kind     string // "proxy" or "model"
	Route    string // a model request's route ([models]); empty for the proxy
	Time     time.Time
	Protocol string // "tcp"
}

// NetworkActivity is the Network Activity event (class 4001) of d.
func NetworkActivity(d *Decision) *Event {
	e := &Event{CategoryUID: CategoryNetwork, ClassUID: ClassNetworkActivity, Time: d.Time.UnixMilli(),
		SeverityID: SeverityInformational, StatusID: StatusSuccess, StatusCode: d.Reason,
		SrcEndpoint:    EndpointOf(d.Remote),
		DstEndpoint:    &Endpoint{Hostname: d.Host, IP: d.IP, Port: d.Port},
		ConnectionInfo: &ConnectionInfo{ProtocolName: "tcp", DirectionID: 2, Direction: "Outbound"},
		ActionID:       1, Action: "Allowed", DispositionID: 1, Disposition: "Allowed",
		Device:   hostDevice(),
		Unmapped: map[string]any{"method": d.Method, "kind": d.Kind},
	}
	if d.Route != "" {
		e.Unmapped["route"] = d.Route
	}
	e.Metadata.CorrelationUID = d.Task
	switch {
	case !d.Allow:
		e.ActivityID, e.ActivityName = NetworkRefuse, "Refuse"
		e.ActionID, e.Action, e.DispositionID, e.Disposition = 2, "Denied", 2, "Blocked"
		e.StatusID, e.SeverityID, e.StatusDetail = StatusFailure, SeverityMedium, "refused: "+d.Reason
	case d.Failed:
		e.ActivityID, e.ActivityName = NetworkFail, "Fail"
		e.StatusID, e.SeverityID, e.StatusDetail = StatusFailure, SeverityLow, "failed: "+d.Reason
	default:
		e.ActivityID, e.ActivityName = NetworkOpen, "Open"
	}
	return e
}

func hostDevice() *Device {
	h, _ := os.Hostname()
	return &Device{Hostname: h, TypeID: 1, Type: "Server"}
}

// BuildVersion is the running binary's version for metadata.product:
// its module version, else its VCS revision (12 characters), else "dev".
func BuildVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			return s.Value[:12]
		}
	}
	return "dev"
}
