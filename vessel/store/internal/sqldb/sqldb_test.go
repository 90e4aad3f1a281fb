package sqldb

import "testing"

func TestRebind(t *testing.T) {
	for in, want := range map[string]string{
		"SELECT 1":                          "SELECT 1",
		"a = ? AND b = ? AND (? = '' OR c)": "a = $1 AND b = $2 AND ($3 = '' OR c)",
		"INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)": "INSERT INTO t VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
	} {
		if got := Rebind(in); got != want {
			t.Errorf("Rebind(%q) = %q, want %q", in, got, want)
		}
	}
}

// A query is rewritten once: later calls return the kept rewrite, and
// allocate nothing.
func TestRebindKeepsTheRewrite(t *testing.T) {
	const q = "SELECT x FROM t WHERE a = ? AND b = ?"
	want := "SELECT x FROM t WHERE a = $1 AND b = $2"
	if got := Rebind(q); got != want {
		t.Fatalf("Rebind = %q, want %q", got, want)
	}
	if _, ok := rebound.Load(q); !ok {
		t.Fatal("the rewrite was not kept")
	}
	if allocs := testing.AllocsPerRun(100, func() { _ = Rebind(q) }); allocs != 0 {
		t.Errorf("Rebind of a kept query allocates %v times, want 0", allocs)
	}
}
