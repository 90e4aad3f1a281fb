package postgres

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	vstore "github.com/astraldeep/astralvessel-go/vessel/store"
)

func TestRegisteredWithStoreOpen(t *testing.T) {
	dsn := testDSN(t)
	schema := testSchema(t, dsn)
	Register()
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	b, err := vstore.Open(context.Background(), dsn+sep+"vessel_schema="+schema, vstore.Options{Agents: []string{"alpha"}, TTL: time.Hour})
	if err != nil {
		t.Fatalf("store.Open: %v", err)
	}
	defer b.Close()
	if _, ok := b.(interface {
		WrapHandler(string, a2asrv.RequestHandler) a2asrv.RequestHandler
	}); !ok {
		t.Fatal("the backend does not offer WrapHandler")
	}
	s := b.Agent("alpha")
	if _, err := s.Create(as("alice"), newTask("t1", "c1", a2a.TaskStateCompleted)); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get(as("alice"), "t1"); err != nil || got.Task.ID != "t1" {
		t.Fatalf("Get = %v, %v", got, err)
	}
}

func FuzzParseURL(f *testing.F) {
	for _, seed := range []string{
		"postgres://u:p@127.0.0.1:5432/db?sslmode=disable",
		"postgres://h/db?vessel_schema=s&vessel_replica_id=r&vessel_lease_ttl=3s",
		"postgresql:///db?host=/run/postgresql&vessel_lease_ttl=x",
		"postgres://%zz", "",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		dsn, _, err := parseURL(raw)
		if err != nil {
			return
		}
		u, err := url.Parse(dsn)
		if err != nil {
			t.Fatalf("parseURL(%q) gave %q, which does not parse: %v", raw, dsn, err)
		}
		for k := range u.Query() {
			if strings.HasPrefix(k, "vessel_") {
				t.Fatalf("parseURL(%q) left setting %q in %q", raw, k, dsn)
			}
		}
	})
}
