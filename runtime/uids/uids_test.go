package uids

import "testing"

func TestParse(t *testing.T) {
	good := map[string]UIDRange{
		"65536:1":         {First: 65536, Count: 1},
		"300000:4096":     {First: 300000, Count: 4096},
		"2147479552:4096": {First: 2147479552, Count: 4096},
	}
	for in, want := range good {
		got, err := Parse(in)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %v, %v; want %v", in, got, err, want)
		}
		if got.String() != in {
			t.Errorf("String() = %q, want %q", got.String(), in)
		}
	}
	for _, in := range []string{"", "1000", "a:b", "100000:", ":4096", "-1:4", "100000:0",
		"65535:10", "0:4096", "2147479552:4097", "4294967295:1", "100000:4294967296"} {
		if r, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) = %v, want an error", in, r)
		}
	}
}

func TestContainsOverlaps(t *testing.T) {
	r := UIDRange{First: 100000, Count: 10}
	for uid, want := range map[uint32]bool{99999: false, 100000: true, 100009: true, 100010: false, 0: false} {
		if r.Contains(uid) != want {
			t.Errorf("Contains(%d) = %v", uid, !want)
		}
	}
	if r.Last() != 100009 {
		t.Errorf("Last() = %d", r.Last())
	}
	cases := []struct {
		o    UIDRange
		want bool
	}{
		{UIDRange{First: 100009, Count: 5}, true},
		{UIDRange{First: 100010, Count: 5}, false},
		{UIDRange{First: 99990, Count: 10}, false},
		{UIDRange{First: 99990, Count: 11}, true},
		{UIDRange{First: 100002, Count: 0}, false},
	}
	for _, c := range cases {
		if r.Overlaps(c.o) != c.want || c.o.Overlaps(r) != c.want {
			t.Errorf("%v overlaps %v: want %v", r, c.o, c.want)
		}
	}
}
