package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"

	"github.com/astraldeep/astralvessel-go/vessel/a2aserver"
	"github.com/astraldeep/astralvessel-go/vessel/cardsign"
	"github.com/astraldeep/astralvessel-go/vessel/client/cardsig"
	"github.com/astraldeep/astralvessel-go/vessel/push/dest"
	"github.com/astraldeep/astralvessel-go/vessel/push/outbox"
	"github.com/astraldeep/astralvessel-go/vessel/settings"
	"github.com/astraldeep/astralvessel-go/vessel/store"
)

// openOutbox starts the push notification outbox in the task store
// (docs/jobs.md); the returned stop ends it before the store closes.
func openOutbox(ctx context.Context, backend store.Backend, d *settings.Deployment, keys *cardsign.Keys,
	met *a2aserver.Metrics, log *zap.Logger) (*outbox.Outbox, func(), error) {
	pb, ok := backend.(store.PushBackend)
	if !ok {
		return nil, func() {}, errors.New("push: the task store keeps no push configs")
	}
	proxy, err := egressProxy()
	if err != nil {
		return nil, nil, err
	}
	var sign func([]byte, cardsig.PushClaims) (string, error)
	if keys != nil {
		sign = keys.SignPush
	} else {
		log.Warn("push notifications are not signed: set VESSEL_CARD_SIGNING_KEY_FILE (receivers then rely on the token alone)")
	}
	cfg := outbox.Config{
		Configs: pb.PushConfigs,
		Policy:  func(owner string) (dest.Policy, error) { return a2aserver.PushPolicy(d, owner) },
		Deliver: outbox.NewDeliverer(proxy, sign).Deliver,
		Log:     log.With(zap.String("component", "push")),
		Observe: met.PushDelivery,
	}
	// VESSEL_PUSH_RESCUE_SECONDS: when a delivery left running by a vessel
	// that died is tried again (default: twice the timeout plus a minute).
	if v := os.Getenv("VESSEL_PUSH_RESCUE_SECONDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < int(outbox.MaxTimeout/time.Second) {
			return nil, nil, fmt.Errorf("VESSEL_PUSH_RESCUE_SECONDS %q: want a whole number of seconds, at least %d", v, int(outbox.MaxTimeout/time.Second))
		}
		cfg.RescueAfter = time.Duration(n) * time.Second
	}
	var ob *outbox.Outbox
	closeDB := func() error { return nil }
	switch b := backend.(type) {
	case interface{ Pool() *pgxpool.Pool }:
		ob, err = outbox.OpenPostgres(ctx, b.Pool(), cfg)
	case store.DB:
		ob, closeDB, err = outbox.OpenSQLite(ctx, b.Path(), cfg)
	default:
		err = fmt.Errorf("push: no outbox for task store %T", backend)
	}
	if err != nil {
		return nil, nil, err
	}
	if err := ob.Start(ctx); err != nil {
		_ = closeDB()
		return nil, nil, err
	}
	stopSelf := func() {}
	if sf, ok := backend.(store.SelfFailures); ok {
		stopSelf = tellSelfFailed(ctx, ob, sf, log)
	}
	stop := func() {
		stopSelf()
		sctx, cancel := context.WithTimeout(context.Background(), outbox.MaxTimeout)
		defer cancel()
		if err := ob.Stop(sctx); err != nil {
			log.Warn("push outbox stop", zap.Error(err))
		}
		_ = closeDB()
	}
	return ob, stop, nil
}

// selfFailedInterval is how often the tasks the store failed itself are
// looked for after the first pass at start.
const selfFailedInterval = 10 * time.Second

// tellSelfFailed enqueues the pushes of the tasks the store failed itself
// (docs/jobs.md): at once, for those failed at this start, then every
// selfFailedInterval, for those a lease reaper fails later. A pass that
// fails is logged; the marks stay for the next. The returned stop ends it.
func tellSelfFailed(ctx context.Context, ob *outbox.Outbox, sf store.SelfFailures, log *zap.Logger) func() {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	pass := func() {
		n, err := ob.EnqueueSelfFailed(ctx, sf)
		switch {
		case err != nil && ctx.Err() == nil:
			log.Warn("push: enqueue the notifications of tasks the vessel failed itself", zap.Error(err))
		case n > 0:
			log.Info("push: enqueued the notifications of tasks the vessel failed itself", zap.Int("deliveries", n))
		}
	}
	go func() {
		defer close(done)
		pass()
		t := time.NewTicker(selfFailedInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				pass()
			}
		}
	}()
	return func() { cancel(); <-done }
}
