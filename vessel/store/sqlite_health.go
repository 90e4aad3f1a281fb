package store

import (
	"context"
	"fmt"
	"time"
)

// Ping implements Pinger: the database answers a query.
func (b *sqliteBackend) Ping(ctx context.Context) error {
	var one int
	if err := b.db.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	b.failMu.Lock()
	failing := b.writeErr
	b.failMu.Unlock()
	if failing == nil {
		return nil
	}
	// Writes failed: try the kept ends now, then (with none kept) one write
	// of our own. With the agents out of service no turn writes, and nothing
	// else might ever show the disk has room again; while an end is still
	// kept only in memory the store is not healthy, whatever else succeeds.
	b.flush(ctx)
	if b.hasUnsaved() {
		b.failMu.Lock()
		failing = b.writeErr
		b.failMu.Unlock()
		return fmt.Errorf("sqlite: writes fail: %w", failing)
	}
	if err := b.probeWrite(ctx); err != nil {
		return fmt.Errorf("sqlite: writes fail: %w", err)
	}
	b.noteWrite(nil)
	return nil
}

// hasUnsaved reports whether any task end is kept only in memory.
func (b *sqliteBackend) hasUnsaved() bool {
	stores := b.allStores()
	for _, s := range stores {
		s.Mu.Lock()
		for _, lt := range s.Tasks {
			if lt.Unsaved {
				s.Mu.Unlock()
				return true
			}
		}
		s.Mu.Unlock()
	}
	return false
}

// probeWrite writes one row of a table of its own (migration 0003), to learn whether the
// database takes writes again.
func (b *sqliteBackend) probeWrite(ctx context.Context) error {
	_, err := b.db.ExecContext(ctx, `INSERT OR REPLACE INTO vessel_write_probe (id, at) VALUES (1, ?)`, time.Now().UnixNano())
	return err
}
