// Package audit is AstralVessel's audit stream: OCSF 1.3 events, one JSON
// object a line, appended to a rotated file (rotlog). The vessel writes
// API Activity (class 6003) for each A2A call, refusals included; sandboxd
// writes Process Activity (1007) for each confined call; the egress writes
// Network Activity (4001) for each decision. Every event about a turn
// carries the turn's task id as metadata.correlation_uid, so the three
// streams join on it. docs/audit.md explains every field.
package audit

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/astraldeep/astralvessel-go/runtime/rotlog"
)

// SchemaVersion is the OCSF schema version the events follow.
const SchemaVersion = "1.3.0"

// Product names the events' source in metadata.product.
const (
	ProductName = "AstralVessel"
	VendorName  = "AstralDeep"
)

// OCSF categories and classes used here.
const (
	CategorySystem      = 1
	CategoryNetwork     = 4
	CategoryApplication = 6

	ClassProcessActivity = 1007
	ClassNetworkActivity = 4001
	ClassAPIActivity     = 6003
)

// Severity ids.
const (
	SeverityInformational = 1
	SeverityLow           = 2
	SeverityMedium        = 3
)

// Status ids.
const (
	StatusSuccess = 1
	StatusFailure = 2
)

var categoryNames = map[int]string{CategorySystem: "System Activity", CategoryNetwork: "Network Activity", CategoryApplication: "Application Activity"}
var classNames = map[int]string{ClassProcessActivity: "Process Activity", ClassNetworkActivity: "Network Activity", ClassAPIActivity: "API Activity"}
var severityNames = map[int]string{0: "Unknown", SeverityInformational: "Informational", SeverityLow: "Low", SeverityMedium: "Medium"}
var statusNames = map[int]string{0: "Unknown", StatusSuccess: "Success", StatusFailure: "Failure"}

// Event is one OCSF event. Emit fills the class, category, type, severity
// and status names, the time and the metadata.
type Event struct {
	ActivityID   int    `json:"activity_id"`
	ActivityName string `json:"activity_name"`
	CategoryUID  int    `json:"category_uid"`
	CategoryName string `json:"category_name"`
	ClassUID     int    `json:"class_uid"`
	ClassName    string `json:"class_name"`
	TypeUID      int    `json:"type_uid"`
	TypeName     string `json:"type_name"`
	Time         int64  `json:"time"` // milliseconds since the Unix epoch
	StartTime    int64  `json:"start_time,omitempty"`
	Duration     int64  `json:"duration,omitempty"` // milliseconds
	SeverityID   int    `json:"severity_id"`
	Severity     string `json:"severity"`
	StatusID     int    `json:"status_id"`
	Status       string `json:"status"`
	StatusCode   string `json:"status_code,omitempty"`
	StatusDetail string `json:"status_detail,omitempty"`
	Message      string `json:"message,omitempty"`

	Metadata Metadata `json:"metadata"`

	Actor       *Actor       `json:"actor,omitempty"`
	API         *API         `json:"api,omitempty"`
	HTTPRequest *HTTPRequest `json:"http_request,omitempty"`
	Resources   []Resource   `json:"resources,omitempty"`
	SrcEndpoint *Endpoint    `json:"src_endpoint,omitempty"`
	DstEndpoint *Endpoint    `json:"dst_endpoint,omitempty"`
	Device      *Device      `json:"device,omitempty"`
	Process     *Process     `json:"process,omitempty"`
	ExitCode    *int32       `json:"exit_code,omitempty"`

	ConnectionInfo *ConnectionInfo `json:"connection_info,omitempty"`
	ActionID       int             `json:"action_id,omitempty"`
	Action         string          `json:"action,omitempty"`
	DispositionID  int             `json:"disposition_id,omitempty"`
	Disposition    string          `json:"disposition,omitempty"`

	// Unmapped holds AstralVessel's own fields that OCSF has no attribute
	// for (docs/audit.md lists them).
	Unmapped map[string]any `json:"unmapped,omitempty"`
}

// Metadata is the OCSF metadata object.
type Metadata struct {
	Version        string  `json:"version"`
	Product        Product `json:"product"`
	UID            string  `json:"uid"`
	CorrelationUID string  `json:"correlation_uid,omitempty"`
	LogName        string  `json:"log_name"`
}

// Product is metadata.product.
type Product struct {
	Name       string   `json:"name"`
	VendorName string   `json:"vendor_name"`
	Version    string   `json:"version"`
	Feature    *Feature `json:"feature,omitempty"`
}

// Feature names the service that wrote the event.
type Feature struct {
	Name string `json:"name"`
}

// Actor is who caused the activity.
type Actor struct {
	User    *User  `json:"user,omitempty"`
	AppName string `json:"app_name,omitempty"`
}

// User is an OCSF user.
type User struct {
	Name   string `json:"name,omitempty"`
	UID    string `json:"uid,omitempty"`
	TypeID int    `json:"type_id"`
	Type   string `json:"type,omitempty"`
}

// API is the OCSF api object.
type API struct {
	Operation string       `json:"operation"`
	Version   string       `json:"version,omitempty"`
	Service   *Service     `json:"service,omitempty"`
	Request   *APIRequest  `json:"request,omitempty"`
	Response  *APIResponse `json:"response,omitempty"`
}

// Service is api.service.
type Service struct {
	Name string `json:"name"`
}

// APIRequest is api.request.
type APIRequest struct {
	UID string `json:"uid,omitempty"`
}

// APIResponse is api.response.
type APIResponse struct {
	Code    int    `json:"code"`
	Error   string `json:"error,omitempty"`
	Message string `json:"message,omitempty"`
}

// HTTPRequest is the OCSF http_request object.
type HTTPRequest struct {
	HTTPMethod string `json:"http_method,omitempty"`
	URL        *URL   `json:"url,omitempty"`
	UserAgent  string `json:"user_agent,omitempty"`
}

// URL is an OCSF url object.
type URL struct {
	Path     string `json:"path,omitempty"`
	Hostname string `json:"hostname,omitempty"`
	Port     int    `json:"port,omitempty"`
	Scheme   string `json:"scheme,omitempty"`
}

// Resource is one entry of resources.
type Resource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

// Endpoint is an OCSF network endpoint.
type Endpoint struct {
	IP       string `json:"ip,omitempty"`
	Port     int    `json:"port,omitempty"`
	Hostname string `json:"hostname,omitempty"`
	SvcName  string `json:"svc_name,omitempty"`
}

// Device is the host the event happened on.
type Device struct {
	Hostname string `json:"hostname"`
	TypeID   int    `json:"type_id"`
	Type     string `json:"type"`
}

// Process is an OCSF process.
type Process struct {
	Pid         int    `json:"pid,omitempty"`
	Name        string `json:"name"`
	UID         string `json:"uid,omitempty"`
	User        *User  `json:"user,omitempty"`
	CreatedTime int64  `json:"created_time,omitempty"`
}

// ConnectionInfo is the OCSF connection_info object.
type ConnectionInfo struct {
	ProtocolName string `json:"protocol_name"`
	DirectionID  int    `json:"direction_id"`
	Direction    string `json:"direction"`
}

// Writer appends events to an audit log; a nil Writer writes nothing.
type Writer struct {
	w       *rotlog.Writer
	feature string
	version string
	now     func() time.Time
}

// Open opens the audit log at path for the service feature ("vessel",
// "sandboxd", "egress") of product version version.
func Open(path, feature, version string, o rotlog.Options) (*Writer, error) {
	w, err := rotlog.Open(path, o)
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	if version == "" {
		version = "dev"
	}
	return &Writer{w: w, feature: feature, version: version, now: time.Now}, nil
}

// Emit completes e (names, type_uid, time, metadata) and appends it.
func (w *Writer) Emit(e *Event) error {
	if w == nil {
		return nil
	}
	Complete(e, w.now(), w.feature, w.version)
	if err := w.w.Append(e); err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	return nil
}

// Close closes the log; a nil Writer is fine.
func (w *Writer) Close() error {
	if w == nil {
		return nil
	}
	return w.w.Close()
}

// Complete fills the fields every event carries: the category and class
// names, type_uid (class_uid*100 + activity_id) and type_name, severity and
// status names, time (at, unless set), and the metadata.
func Complete(e *Event, at time.Time, feature, version string) {
	e.CategoryName = categoryNames[e.CategoryUID]
	e.ClassName = classNames[e.ClassUID]
	e.TypeUID = e.ClassUID*100 + e.ActivityID
	e.TypeName = e.ClassName + ": " + e.ActivityName
	e.Severity = severityNames[e.SeverityID]
	e.Status = statusNames[e.StatusID]
	if e.Time == 0 {
		e.Time = at.UnixMilli()
	}
	e.Metadata.Version = SchemaVersion
	e.Metadata.Product = Product{Name: ProductName, VendorName: VendorName, Version: version, Feature: &Feature{Name: feature}}
	e.Metadata.LogName = "audit"
	if e.Metadata.UID == "" {
		var b [16]byte
		_, _ = rand.Read(b[:])
		e.Metadata.UID = hex.EncodeToString(b[:])
	}
}

// EndpointOf is the endpoint of a "host:port" address (a remote address);
// an address that does not split is kept whole as the hostname.
func EndpointOf(addr string) *Endpoint {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return &Endpoint{Hostname: addr}
	}
	p, _ := strconv.Atoi(port)
	if ip := net.ParseIP(host); ip != nil {
		return &Endpoint{IP: ip.String(), Port: p}
	}
	return &Endpoint{Hostname: host, Port: p}
}
