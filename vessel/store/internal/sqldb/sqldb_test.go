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
