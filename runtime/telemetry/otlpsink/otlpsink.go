// Package otlpsink is a small OTLP trace receiver: the OpenTelemetry
// protocol's trace service over gRPC and OTLP/HTTP (protobuf or JSON at
// /v1/traces), keeping the spans it receives in memory and, when asked,
// writing each as one JSON line. The tests and the Compose e2e use it to
// see what the services export; it is not a collector.
package otlpsink

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// MaxBodyBytes bounds one OTLP/HTTP request body.
const MaxBodyBytes = 16 << 20

// Span is one received span, flattened.
type Span struct {
	Service    string            `json:"service"`
	TraceID    string            `json:"trace_id"`
	SpanID     string            `json:"span_id"`
	ParentID   string            `json:"parent_span_id,omitempty"`
	Name       string            `json:"name"`
	Kind       string            `json:"kind"`
	Start      time.Time         `json:"start"`
	End        time.Time         `json:"end"`
	Status     string            `json:"status,omitempty"`
	Attributes map[string]string `json:"attributes,omitempty"`
}

// Sink receives spans.
type Sink struct {
	coltracepb.UnimplementedTraceServiceServer

	mu    sync.Mutex
	spans []Span
	out   io.Writer // JSON lines; nil writes none
	wake  chan struct{}
}

// New is a sink writing each span as a JSON line to out (nil: none).
func New(out io.Writer) *Sink { return &Sink{out: out, wake: make(chan struct{})} }

// Export implements the OTLP trace service.
func (s *Sink) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	if err := s.add(req); err != nil {
		return nil, err
	}
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

func (s *Sink) add(req *coltracepb.ExportTraceServiceRequest) error {
	var got []Span
	for _, rs := range req.GetResourceSpans() {
		service := attrs(rs.GetResource().GetAttributes())["service.name"]
		for _, ss := range rs.GetScopeSpans() {
			for _, sp := range ss.GetSpans() {
				got = append(got, flatten(service, sp))
			}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sp := range got {
		if s.out != nil {
			b, err := json.Marshal(sp)
			if err != nil {
				return fmt.Errorf("otlpsink: %w", err)
			}
			if _, err := s.out.Write(append(b, '\n')); err != nil {
				return fmt.Errorf("otlpsink: write: %w", err)
			}
		}
	}
	s.spans = append(s.spans, got...)
	close(s.wake)
	s.wake = make(chan struct{})
	return nil
}

func flatten(service string, sp *tracepb.Span) Span {
	out := Span{Service: service, TraceID: hex.EncodeToString(sp.GetTraceId()), SpanID: hex.EncodeToString(sp.GetSpanId()),
		Name: sp.GetName(), Kind: sp.GetKind().String(),
		Start: time.Unix(0, int64(sp.GetStartTimeUnixNano())).UTC(), End: time.Unix(0, int64(sp.GetEndTimeUnixNano())).UTC(),
		Attributes: attrs(sp.GetAttributes())}
	if len(sp.GetParentSpanId()) > 0 {
		out.ParentID = hex.EncodeToString(sp.GetParentSpanId())
	}
	if c := sp.GetStatus().GetCode(); c != tracepb.Status_STATUS_CODE_UNSET {
		out.Status = c.String()
	}
	return out
}

func attrs(kvs []*commonpb.KeyValue) map[string]string {
	if len(kvs) == 0 {
		return nil
	}
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		v := kv.GetValue()
		switch x := v.GetValue().(type) {
		case *commonpb.AnyValue_StringValue:
			m[kv.GetKey()] = x.StringValue
		case *commonpb.AnyValue_IntValue:
			m[kv.GetKey()] = strconv.FormatInt(x.IntValue, 10)
		case *commonpb.AnyValue_BoolValue:
			m[kv.GetKey()] = strconv.FormatBool(x.BoolValue)
		case *commonpb.AnyValue_DoubleValue:
			m[kv.GetKey()] = strconv.FormatFloat(x.DoubleValue, 'g', -1, 64)
		default:
			b, _ := protojson.Marshal(v)
			m[kv.GetKey()] = string(b)
		}
	}
	return m
}

// Spans is every span received so far.
func (s *Sink) Spans() []Span {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Span(nil), s.spans...)
}

// Wait returns the spans once ok says they are enough, or an error when ctx
// ends first.
func (s *Sink) Wait(ctx context.Context, ok func([]Span) bool) ([]Span, error) {
	for {
		s.mu.Lock()
		spans, wake := append([]Span(nil), s.spans...), s.wake
		s.mu.Unlock()
		if ok(spans) {
			return spans, nil
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return spans, fmt.Errorf("otlpsink: %d spans, not the ones awaited: %w", len(spans), ctx.Err())
		}
	}
}

// ServeHTTP is OTLP/HTTP: POST /v1/traces with a protobuf or JSON body.
func (s *Sink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" {
		http.Error(w, "want POST /v1/traces", http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes+1))
	if err != nil || len(body) > MaxBodyBytes {
		http.Error(w, "body unreadable or too large", http.StatusRequestEntityTooLarge)
		return
	}
	req := &coltracepb.ExportTraceServiceRequest{}
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch mt {
	case "application/x-protobuf":
		err = proto.Unmarshal(body, req)
	case "application/json":
		err = protojson.Unmarshal(body, req)
	default:
		http.Error(w, "want application/x-protobuf or application/json", http.StatusUnsupportedMediaType)
		return
	}
	if err != nil {
		http.Error(w, "bad OTLP request: "+err.Error(), http.StatusBadRequest)
		return
	}
	if err := s.add(req); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	resp, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", mt)
	if mt == "application/json" {
		resp, _ = protojson.Marshal(&coltracepb.ExportTraceServiceResponse{})
	}
	_, _ = w.Write(resp)
}

// Server serves a sink on a gRPC and an HTTP listener.
type Server struct {
	Sink     *Sink
	GRPCAddr net.Addr // nil when not served
	HTTPAddr net.Addr
	grpc     *grpc.Server
	http     *http.Server
}

// Serve starts a sink on grpcAddr (OTLP/gRPC) and httpAddr (OTLP/HTTP);
// an empty address serves nothing there.
func Serve(sink *Sink, grpcAddr, httpAddr string) (*Server, error) {
	s := &Server{Sink: sink}
	if grpcAddr != "" {
		ln, err := net.Listen("tcp", grpcAddr)
		if err != nil {
			return nil, fmt.Errorf("otlpsink: grpc listener: %w", err)
		}
		s.grpc = grpc.NewServer()
		coltracepb.RegisterTraceServiceServer(s.grpc, sink)
		s.GRPCAddr = ln.Addr()
		go func() { _ = s.grpc.Serve(ln) }()
	}
	if httpAddr != "" {
		ln, err := net.Listen("tcp", httpAddr)
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("otlpsink: http listener: %w", err)
		}
		s.http = &http.Server{Handler: sink, ReadHeaderTimeout: 10 * time.Second}
		s.HTTPAddr = ln.Addr()
		go func() { _ = s.http.Serve(ln) }() // returns when Close closes it
	}
	return s, nil
}

// Close stops both listeners.
func (s *Server) Close() {
	if s.grpc != nil {
		s.grpc.Stop()
	}
	if s.http != nil {
		_ = s.http.Close()
	}
}

// Trace is the spans of one trace id.
func Trace(spans []Span, traceID string) []Span {
	var out []Span
	for _, sp := range spans {
		if sp.TraceID == traceID {
			out = append(out, sp)
		}
	}
	return out
}
