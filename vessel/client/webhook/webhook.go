// Package webhook receives the vessel's push notifications (docs/jobs.md):
// an http.Handler that checks the token, verifies the signature (a
// detached JWS made with the vessel's card-signing key, checked against
// its published JWK set) and what it is bound to (this receiver's URL,
// the task, the delivery id, a recent time), decodes the A2A
// StreamResponse and hands each delivery to the application once per
// delivery id, refusing replays.
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

// WorkingExtension is the URI of the vessel's push-working A2A extension
// (docs/jobs.md): a push config registered with it listed in the
// A2A-Extensions header is also sent every WORKING status update of its
// task (the turn's events), in order before the end.
const WorkingExtension = "urn:astralvessel:ext:push-working:v1"

// Defaults of a Receiver.
const (
	DefaultMaxBody  = 16 << 20
	DefaultMaxAge   = 5 * time.Minute
	DefaultSkew     = time.Minute
	DefaultRemember = 100000
)

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
	// KeyID is the kid of the key that signed it ("" without Keys), and
	// IssuedAt when the vessel signed this attempt.
	KeyID    string
	IssuedAt time.Time
}

// Receiver is an http.Handler for a webhook URL.
type Receiver struct {
	// Token, when set, must equal the A2A-Notification-Token header (the
	// config's token).
	Token string
	// URL is this receiver's webhook URL exactly as registered in the push
	// config; with Keys a signature's aud must equal it, so a delivery
	// captured at another receiver is refused here.
	URL string
	// Keys gives the vessel's JWK set (NewKeyCache fetches and caches it);
	// with Keys every delivery must carry a valid signature bound to URL.
	// nil accepts unsigned deliveries, which only the token then
	// authenticates (and no replay is then told from a repeat).
	Keys KeySource
	// Handle is called once per delivery id remembered; an error answers
	// 500 and the vessel retries.
	Handle func(ctx context.Context, d *Delivery) error
	// MaxBody defaults to DefaultMaxBody.
	MaxBody int64
	// MaxAge is how old a signature's iat may be (DefaultMaxAge), Skew how
	// far either way the clocks may differ (DefaultSkew): iat must be in
	// [now-MaxAge-Skew, now+Skew].
	MaxAge, Skew time.Duration
	// Remember bounds the delivery ids kept to drop repeats and replays
	// (DefaultRemember); each is kept until its signature is too old to be
	// accepted anyway, and when that many unexpired ids are held a new
	// delivery is answered 503 (the vessel retries) rather than an id
	// forgotten early. Negative keeps none.
	Remember int
	// Now is the clock (time.Now).
	Now func() time.Time

	mu   sync.Mutex
	seen map[string]*seenID
	fifo []fifoEntry // in claim order, with the expiry each claim set
}

// fifoEntry is one claim of an id: an id whose expiry a repeat moved on
// is queued again, and its earlier entry, once passed, only goes.
type fifoEntry struct {
	id    string
	until time.Time
}

type seenID struct {
	until time.Time
	done  bool
}

// Errors of a refused delivery (the status it is answered with).
var (
	ErrToken = errors.New("webhook: wrong or missing notification token")
	// ErrSignature: the signature is missing, does not verify, or is bound
	// to another receiver, task or delivery, or to a time outside the
	// window (401, final for the vessel).
	ErrSignature = errors.New("webhook: signature does not verify")
	// ErrKeys means the vessel's key set could not be had, or lacks the
	// signature's kid even after a fetch: a passing fault, which ServeHTTP
	// answers 503 so the vessel delivers again.
	ErrKeys = errors.New("webhook: the vessel's keys are not available")
	// ErrBusy: Remember unexpired ids are held (503).
	ErrBusy = errors.New("webhook: too many recent deliveries to remember another")
	// ErrInFlight: the same delivery id is being handled (503).
	ErrInFlight = errors.New("webhook: this delivery is being handled")
)

// ServeHTTP implements http.Handler. A delivery id already handled (a
// repeat of the vessel's, or a replay within the window) is answered 204
// without calling Handle: the vessel then stops, and a replay changes
// nothing. One being handled is answered 503, so the vessel comes back.
func (r *Receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	d, err := r.Read(req)
	if err == nil {
		err = r.claim(d)
	}
	if err != nil {
		status := http.StatusBadRequest
		switch {
		case errors.Is(err, errDuplicate):
			w.WriteHeader(http.StatusNoContent)
			return
		case errors.Is(err, ErrToken) || errors.Is(err, ErrSignature):
			status = http.StatusUnauthorized
		case errors.Is(err, ErrKeys) || errors.Is(err, ErrBusy) || errors.Is(err, ErrInFlight):
			status = http.StatusServiceUnavailable
			w.Header().Set("Retry-After", "1")
		case errors.Is(err, errConfig):
			status = http.StatusInternalServerError
		}
		http.Error(w, err.Error(), status)
		return
	}
	if r.Handle != nil {
		if err := r.Handle(req.Context(), d); err != nil {
			r.forget(d.ID)
			http.Error(w, "not handled", http.StatusInternalServerError)
			return
		}
	}
	r.done(d.ID)
	w.WriteHeader(http.StatusNoContent)
}

var (
	errDuplicate = errors.New("webhook: delivery already handled")
	errConfig    = errors.New("webhook: receiver misconfigured")
)

func (r *Receiver) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *Receiver) window() (maxAge, skew time.Duration) {
	maxAge, skew = r.MaxAge, r.Skew
	if maxAge <= 0 {
		maxAge = DefaultMaxAge
	}
	if skew <= 0 {
		skew = DefaultSkew
	}
	return maxAge, skew
}

// Read checks and decodes one delivery request: the token, and with Keys
// the signature and what it is bound to (URL, delivery id, task, time).
// Repeats and replays of a delivery id are ServeHTTP's to drop.
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
	var signed *cardsig.PushHeader
	if r.Keys != nil {
		h, err := r.verify(req.Context(), req.Header.Get(SignatureHeader), body, id)
		if err != nil {
			return nil, err
		}
		signed = &h
		d.KeyID, d.IssuedAt = h.KeyID, h.IssuedAt
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
	if signed != nil && string(d.TaskID) != signed.TaskID {
		return nil, fmt.Errorf("%w: signed for task %q, the body is about %q", ErrSignature, signed.TaskID, d.TaskID)
	}
	d.Event = sr.Event
	return d, nil
}

// verify checks the signature and its claims.
func (r *Receiver) verify(ctx context.Context, sig string, body []byte, id string) (cardsig.PushHeader, error) {
	if r.URL == "" {
		return cardsig.PushHeader{}, fmt.Errorf("%w: Receiver.URL must be set with Keys", errConfig)
	}
	if sig == "" {
		return cardsig.PushHeader{}, fmt.Errorf("%w: no %s header", ErrSignature, SignatureHeader)
	}
	h, err := cardsig.ReadPush(sig)
	if err != nil {
		return h, fmt.Errorf("%w: %w", ErrSignature, err)
	}
	set, err := r.Keys.KeySet(ctx, h.KeyID)
	if err != nil {
		return h, fmt.Errorf("%w: %w", ErrKeys, err)
	}
	if h, err = cardsig.VerifyPush(sig, body, set); err != nil {
		if errors.Is(err, cardsig.ErrUnknownKey) {
			return h, fmt.Errorf("%w: %w (the key set was fetched again at most once a while ago)", ErrKeys, err)
		}
		return h, fmt.Errorf("%w: %w", ErrSignature, err)
	}
	if h.Audience != r.URL {
		return h, fmt.Errorf("%w: signed for %q, received at %q", ErrSignature, h.Audience, r.URL)
	}
	if h.DeliveryID != id {
		return h, fmt.Errorf("%w: signed for delivery %q, received as %q", ErrSignature, h.DeliveryID, id)
	}
	maxAge, skew := r.window()
	now := r.now()
	switch {
	case h.IssuedAt.Before(now.Add(-maxAge - skew)):
		return h, fmt.Errorf("%w: signed at %s, older than %s", ErrSignature, h.IssuedAt.UTC().Format(time.RFC3339), maxAge+skew)
	case h.IssuedAt.After(now.Add(skew)):
		return h, fmt.Errorf("%w: signed at %s, ahead of this clock by more than %s", ErrSignature, h.IssuedAt.UTC().Format(time.RFC3339), skew)
	}
	return h, nil
}

// claim records d.ID as being handled, or tells why not: errDuplicate
// (handled already), ErrInFlight, ErrBusy. An id is kept until its
// signature's iat (the receive time when unsigned) is too old to pass.
func (r *Receiver) claim(d *Delivery) error {
	if r.Remember < 0 {
		return nil
	}
	n := r.Remember
	if n == 0 {
		n = DefaultRemember
	}
	maxAge, skew := r.window()
	now := r.now()
	at := d.IssuedAt
	if at.IsZero() {
		at = now
	}
	until := at.Add(maxAge + 2*skew)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen == nil {
		r.seen = map[string]*seenID{}
	}
	for len(r.fifo) > 0 && !now.Before(r.fifo[0].until) {
		if e, ok := r.seen[r.fifo[0].id]; ok && !now.Before(e.until) {
			delete(r.seen, r.fifo[0].id)
		}
		r.fifo = r.fifo[1:]
	}
	if e, ok := r.seen[d.ID]; ok {
		if until.After(e.until) {
			e.until = until
			r.fifo = append(r.fifo, fifoEntry{d.ID, until})
		}
		if e.done {
			return errDuplicate
		}
		return ErrInFlight
	}
	if len(r.seen) >= n {
		return ErrBusy
	}
	r.seen[d.ID] = &seenID{until: until}
	r.fifo = append(r.fifo, fifoEntry{d.ID, until})
	return nil
}

func (r *Receiver) done(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e, ok := r.seen[id]; ok {
		e.done = true
	}
}

func (r *Receiver) forget(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.seen, id)
}
