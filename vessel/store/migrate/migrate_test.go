package migrate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"
)

type fakeTarget struct {
	applied []int
	ran     []string
	locked  bool
	fail    string
}

func (f *fakeTarget) Lock(context.Context) (func(), error) {
	f.locked = true
	return func() { f.locked = false }, nil
}

func (f *fakeTarget) Applied(context.Context) ([]int, error) { return f.applied, nil }

func (f *fakeTarget) Apply(_ context.Context, m Migration) error {
	if !f.locked {
		return errors.New("applied without the lock")
	}
	if m.Name == f.fail {
		return errors.New("boom")
	}
	f.ran = append(f.ran, m.Name)
	f.applied = append(f.applied, m.Version)
	return nil
}

func TestLoadOrdersAndChecksNames(t *testing.T) {
	fsys := fstest.MapFS{
		"m/0010_b.sql":   {Data: []byte("B")},
		"m/0002_a.sql":   {Data: []byte("A")},
		"m/README.md":    {Data: []byte("not a migration")},
		"bad/x.sql":      {Data: []byte("")},
		"dup/0001_a.sql": {Data: []byte("")},
		"dup/1_b.sql":    {Data: []byte("")},
	}
	ms, err := Load(fsys, "m")
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 || ms[0].Version != 2 || ms[1].Name != "0010_b.sql" || ms[1].SQL != "B" || Latest(ms) != 10 {
		t.Fatalf("Load: %+v", ms)
	}
	if _, err := Load(fsys, "bad"); err == nil {
		t.Fatal("a name without a version was accepted")
	}
	if _, err := Load(fsys, "dup"); err == nil || !strings.Contains(err.Error(), "share version 1") {
		t.Fatalf("duplicate versions: %v", err)
	}
}

func TestRunAppliesMissingInOrder(t *testing.T) {
	ms := []Migration{{Version: 1, Name: "0001_a.sql"}, {Version: 2, Name: "0002_b.sql"}, {Version: 3, Name: "0003_c.sql"}}
	f := &fakeTarget{applied: []int{2}}
	if err := Run(context.Background(), f, ms); err != nil {
		t.Fatal(err)
	}
	if strings.Join(f.ran, ",") != "0001_a.sql,0003_c.sql" || f.locked {
		t.Fatalf("ran %v, locked after: %v", f.ran, f.locked)
	}
	f = &fakeTarget{fail: "0002_b.sql"}
	if err := Run(context.Background(), f, ms); err == nil || !strings.Contains(err.Error(), "0002_b.sql") {
		t.Fatalf("failing migration: %v", err)
	}
	if strings.Join(f.ran, ",") != "0001_a.sql" {
		t.Fatalf("went on after a failure: %v", f.ran)
	}
}

func TestRunRefusesNewerSchema(t *testing.T) {
	f := &fakeTarget{applied: []int{1, 7}}
	err := Run(context.Background(), f, []Migration{{Version: 1, Name: "0001_a.sql"}})
	if err == nil || !strings.Contains(err.Error(), "newer than this vessel") || len(f.ran) != 0 {
		t.Fatalf("newer schema: %v, ran %v", err, f.ran)
	}
}

func TestCheckRefusesSharedVersions(t *testing.T) {
	if err := Check([]Migration{{Version: 1, Name: "0001_a.sql"}, {Version: 2, Name: "0002_b.sql"}}); err != nil {
		t.Fatal(err)
	}
	err := Check([]Migration{{Version: 1, Name: "0001_a.sql"}, {Version: 1, Name: "0001_go (Go)"}})
	if err == nil || !strings.Contains(err.Error(), "share version 1") {
		t.Fatalf("Check of a shared version: %v", err)
	}
}

func TestGaps(t *testing.T) {
	for _, c := range []struct {
		versions []int
		want     string
	}{
		{nil, "[]"},
		{[]int{1, 2, 3}, "[]"},
		{[]int{1, 2, 3, 4, 5, 7, 8}, "[6]"},
		{[]int{2, 5, 6, 9}, "[1 3 4 7 8]"},
	} {
		ms := make([]Migration, len(c.versions))
		for i, v := range c.versions {
			ms[i] = Migration{Version: v}
		}
		if got := fmt.Sprint(Gaps(ms)); got != c.want {
			t.Errorf("Gaps(%v) = %s, want %s", c.versions, got, c.want)
		}
	}
}
