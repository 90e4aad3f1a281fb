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

	"github.com/astraldeep/astralvessel-go/deployer/spec"
	"github.com/astraldeep/astralvessel-go/vessel/a2aserver"
	"github.com/astraldeep/astralvessel-go/vessel/client/cardsig"
	"github.com/astraldeep/astralvessel-go/vessel/push/dest"
	"github.com/astraldeep/astralvessel-go/vessel/push/outbox"
	"github.com/astraldeep/astralvessel-go/vessel/store"
)

// openOutbox starts the push notification outbox in the task store
// (docs/jobs.md); the returned stop ends it before the store closes.
func openOutbox(ctx context.Context, backend store.Backend, d *spec.Deployment, keys *cardsig.Keys,
	met *a2aserver.Metrics, log *zap.Logger) (*outbox.Outbox, func(), error) {
	pb, ok := backend.(store.PushBackend)
	if !ok {
		return nil, func() {}, errors.New("push: the task store keeps no push configs")
	}
	proxy, err := egressProxy()
	if err != nil {
		return nil, nil, err
	}
	var sign func([]byte, string) (string, error)
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
	stop := func() {
		sctx, cancel := context.WithTimeout(context.Background(), outbox.MaxTimeout)
		defer cancel()
		if err := ob.Stop(sctx); err != nil {
			log.Warn("push outbox stop", zap.Error(err))
		}
		_ = closeDB()
	}
	return ob, stop, nil
}
