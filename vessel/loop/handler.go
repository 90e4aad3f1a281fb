package loop

import (
	"errors"
	"time"

	"github.com/astraldeep/astralvessel-go/vessel/model"
)

// Text implements model.Handler, merging small pieces.
func (r *runner) Text(d string) {
	r.noteFirstToken()
	if r.text.Len() == 0 {
		r.textAt = time.Now()
	}
	r.text.WriteString(d)
	max := r.cfg.CoalesceBytes
	if max <= 0 {
		max = 1024
	}
	delay := r.cfg.CoalesceDelay
	if delay <= 0 {
		delay = 25 * time.Millisecond
	}
	if r.text.Len() >= max || time.Since(r.textAt) >= delay {
		r.flushText()
	}
}

// Reasoning implements model.Handler.
func (r *runner) Reasoning(d string) {
	r.noteFirstToken()
	r.reasoning += len(d)
	r.send(Event{"type": EventReasoningDelta, "text": d})
}

// Retry implements model.Retrier: the caller hears of each retry.
func (r *runner) Retry(attempt int, wait time.Duration, err error) {
	ev := Event{"type": EventModelRetry, "attempt": attempt, "wait_ms": wait.Milliseconds(), "step": r.step + 1}
	var me *model.Error
	if errors.As(err, &me) {
		ev["error"] = me.Error()
	}
	r.send(ev)
}

func (r *runner) noteFirstToken() {
	if !r.sawText {
		r.sawText = true
		r.res.FirstToken = time.Since(r.res.Started)
	}
}

func (r *runner) flushText() {
	if r.text.Len() == 0 {
		return
	}
	s := r.text.String()
	r.text.Reset()
	r.emit(Event{"type": EventTextDelta, "text": s})
}
