// Package webhook receives the vessel's push notifications (docs/jobs.md):
// an http.Handler that checks the token, verifies the signature (a
// detached JWS made with the vessel's card-signing key, checked against
// its published JWK set), decodes the A2A StreamResponse and hands each
// delivery to the application once per delivery id it remembers.
package webhook

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/astraldeep/astralvessel-go/vessel/client/cardsig"
)

// Headers the vessel sends (besides Content-Type).
const (
	TokenHeader      = "A2A-Notification-Token"
	DeliveryIDHeader = "X-Vessel-Delivery-Id"
	AttemptHeader    = "X-Vessel-Delivery-Attempt"
	SignatureHeader  = "X-Vessel-Signature"
	ContentType      = "application/a2a+json"
)

// DefaultMaxBody bounds a delivery's body.
const DefaultMaxBody = 16 << 20

// Delivery is one push notification.
type Delivery struct {
	// ID is the same on every attempt of one delivery.
	ID      string
	Attempt int
	// Event is the status update (or task) pushed; TaskID and State are
	// read from it.
	Event  a2a.Event
	TaskID a2a.TaskID
	State  a2a.TaskState
	// KeyID is the kid of the key that signed it ("" without Keys).
	KeyID string
}

// Receiver is an http.Handler for a webhook URL.
type Receiver struct {
	// Token, when set, must equal the A2A-Notification-Token header (the
	// config's token).
	Token string
	// Keys returns the vessel's JWK set (JWKS fetches and caches it); with
	// Keys every delivery must carry a valid signature. nil accepts
	// unsigned deliveries, which only the token then authenticates.
	Keys func(ctx context.Context) ([]byte, error)
	// Handle is called once per delivery id remembered; an error answers
	// 500 and the vessel retries.
	Handle func(ctx context.Context, d *Delivery) error
	// MaxBody defaults to DefaultMaxBody.
	MaxBody int64
	// Remember is how many delivery ids are kept to drop duplicates;
	// default 10000; negative keeps none.
	Remember int

	mu   sync.Mutex
	seen map[string]bool
	ring []string
}

// Errors of a refused delivery (the status it is answered with).
var (
	ErrToken     = errors.New("webhook: wrong or missing notification token")
	ErrSignature = errors.New("webhook: signature does not verify")
	// ErrKeys means the vessel's key set could not be had: a passing
	// fault, which ServeHTTP answers 503 so the vessel delivers again.
	ErrKeys = errors.New("webhook: the vessel's keys are not available")
)

// ServeHTTP implements http.Handler.
func (r *Receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	d, err := r.Read(req)
	if err != nil {
		status := http.StatusBadRequest
		switch {
		case errors.Is(err, ErrToken) || errors.Is(err, ErrSignature):
			status = http.StatusUnauthorized
		case errors.Is(err, ErrKeys):
			status = http.StatusServiceUnavailable
		}
		http.Error(w, err.Error(), status)
		return
	}
	if r.duplicate(d.ID) {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if r.Handle != nil {
		if err := r.Handle(req.Context(), d); err != nil {
			r.forget(d.ID)
			http.Error(w, "not handled", http.StatusInternalServerError)
			return
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

// Read checks and decodes one delivery request.
func (r *Receiver) Read(req *http.Request) (*Delivery, error) {
	if mt, _, err := mime.ParseMediaType(req.Header.Get("Content-Type")); err != nil || (mt != ContentType && mt != "application/json") {
		return nil, fmt.Errorf("webhook: content type %q, want %s", req.Header.Get("Content-Type"), ContentType)
	}
	if r.Token != "" && subtle.ConstantTimeCompare([]byte(req.Header.Get(TokenHeader)), []byte(r.Token)) != 1 {
		return nil, ErrToken
	}
	id := req.Header.Get(DeliveryIDHeader)
	if id == "" || len(id) > 256 {
		return nil, fmt.Errorf("webhook: missing or oversized %s", DeliveryIDHeader)
	}
	limit := r.MaxBody
	if limit <= 0 {
		limit = DefaultMaxBody
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("webhook: read body: %w", err)
	}
	if int64(len(body)) > limit {
		return nil, fmt.Errorf("webhook: body larger than %d bytes", limit)
	}
	d := &Delivery{ID: id}
	d.Attempt, _ = strconv.Atoi(req.Header.Get(AttemptHeader))
	if r.Keys != nil {
		jwks, err := r.Keys(req.Context())
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrKeys, err)
		}
		if d.KeyID, err = cardsig.VerifyPush(req.Header.Get(SignatureHeader), body, id, jwks); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrSignature, err)
		}
	}
	var sr a2a.StreamResponse
	if err := json.Unmarshal(body, &sr); err != nil {
		return nil, fmt.Errorf("webhook: body is not an A2A StreamResponse: %w", err)
	}
	switch e := sr.Event.(type) {
	case *a2a.TaskStatusUpdateEvent:
		d.TaskID, d.State = e.TaskID, e.Status.State
	case *a2a.Task:
		d.TaskID, d.State = e.ID, e.Status.State
	default:
		return nil, fmt.Errorf("webhook: unexpected event %T", sr.Event)
	}
	d.Event = sr.Event
	return d, nil
}

func (r *Receiver) duplicate(id string) bool {
	if r.Remember < 0 {
		return false
	}
	n := r.Remember
	if n == 0 {
		n = 10000
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen == nil {
		r.seen = map[string]bool{}
	}
	if r.seen[id] {
		return true
	}
	r.seen[id] = true
	r.ring = append(r.ring, id)
	if len(r.ring) > n {
		delete(r.seen, r.ring[0])
		r.ring = r.ring[1:]
	}
	return false
}

func (r *Receiver) forget(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.seen, id)
}

// JWKS fetches the vessel's JWK set from baseURL+cardsig.JWKSPath and
// keeps it for ttl (default 10 minutes). The set lists every key being
// rotated, so a cached set keeps verifying across a rotation.
func JWKS(hc *http.Client, baseURL string, ttl time.Duration) func(ctx context.Context) ([]byte, error) {
	if hc == nil {
		hc = http.DefaultClient
	}
	if ttl <= 0 {
		ttl = 10 * time.Minute
	}
	var mu sync.Mutex
	var cached []byte
	var at time.Time
	return func(ctx context.Context) ([]byte, error) {
		mu.Lock()
		defer mu.Unlock()
		if cached != nil && time.Since(at) < ttl {
			return cached, nil
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, baseURL+cardsig.JWKSPath, nil)
		if err != nil {
			return nil, fmt.Errorf("webhook: jwks request: %w", err)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return nil, fmt.Errorf("webhook: fetch jwks: %w", err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("webhook: fetch jwks: %s", resp.Status)
		}
		b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		if err != nil {
			return nil, fmt.Errorf("webhook: read jwks: %w", err)
		}
		cached, at = b, time.Now()
		return b, nil
	}
}
