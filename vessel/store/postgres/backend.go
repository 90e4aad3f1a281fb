package postgres

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	vstore "github.com/astraldeep/astralvessel-go/vessel/store"
)

// Register makes store.Open accept postgres:// and postgresql:// URLs.
// cmd/vessel calls it before opening the task store.
func Register() {
	vstore.Register("postgres", OpenBackend)
	vstore.Register("postgresql", OpenBackend)
}

// Interface checks: a *DB is a store.Backend, and offers WrapHandler.
var (
	_ vstore.Backend      = (*DB)(nil)
	_ vstore.CallCarrying = (*DB)(nil)
)

// OpenBackend is the store.Opener for PostgreSQL. Besides the usual
// connection parameters, the URL may carry settings of ours, removed before
// connecting:
//
//	vessel_schema=NAME      use (and create) this schema
//	vessel_replica_id=ID    this replica's id in the lease table (default random)
//	vessel_lease_ttl=15s    how long a silent replica keeps its tasks
//
// VESSEL_REPLICA_ID in the environment also sets the replica id.
func OpenBackend(ctx context.Context, rawURL string, opt vstore.Options) (vstore.Backend, error) {
	dsn, o, err := parseURL(rawURL)
	if err != nil {
		return nil, err
	}
	o.TTL = opt.TTL
	o.CleanupInterval = opt.CleanupInterval
	o.Strip = opt.Strip
	if o.ReplicaID == "" {
		o.ReplicaID = os.Getenv("VESSEL_REPLICA_ID")
	}
	db, err := Open(ctx, dsn, o)
	if err != nil {
		return nil, err
	}
	return db, nil
}

// parseURL splits our vessel_* query settings from the connection URL.
func parseURL(rawURL string) (string, Options, error) {
	var o Options
	u, err := url.Parse(rawURL)
	if err != nil {
		// The message of url.Parse repeats the URL, which may hold a password.
		return "", o, fmt.Errorf("postgres task store: the task_store URL does not parse")
	}
	q := u.Query()
	for key, vals := range q {
		if !strings.HasPrefix(key, "vessel_") {
			continue
		}
		v := ""
		if len(vals) > 0 {
			v = vals[len(vals)-1]
		}
		switch key {
		case "vessel_schema":
			o.Schema = v
		case "vessel_replica_id":
			o.ReplicaID = v
		case "vessel_lease_ttl":
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return "", o, fmt.Errorf("postgres task store: vessel_lease_ttl %q is not a positive duration", v)
			}
			o.LeaseTTL = d
		default:
			return "", o, fmt.Errorf("postgres task store: unknown URL setting %q", key)
		}
		q.Del(key)
	}
	u.RawQuery = q.Encode()
	return u.String(), o, nil
}
