package spec

import (
	"math"
	"regexp"
	"strings"
	"testing"
)

func TestCallUIDRangeLayout(t *testing.T) {
	for _, c := range []struct {
		index       int
		first, last uint32
		flag        string
	}{
		{0, 100000, 104095, "100000:4096"},
		{1, 104096, 108191, "104096:4096"},
		{7, 128672, 132767, "128672:4096"},
	} {
		r, err := CallUIDRange(c.index)
		if err != nil {
			t.Fatalf("agent %d: %v", c.index, err)
		}
		if r.First != c.first || r.Last() != c.last || r.String() != c.flag {
			t.Errorf("agent %d: %v (last %d), want first %d last %d flag %s", c.index, r, r.Last(), c.first, c.last, c.flag)
		}
	}
}

// TestCallUIDRangesDisjoint: no two agents share a uid, and consecutive
// ranges touch (no uid is skipped, so the layout is exactly base+4096*i).
func TestCallUIDRangesDisjoint(t *testing.T) {
	const n = 300
	ranges := make([]UIDRange, n)
	for i := range ranges {
		r, err := CallUIDRange(i)
		if err != nil {
			t.Fatal(err)
		}
		if r.Count != CallUIDsPerAgent || r.First < CallUIDBase {
			t.Fatalf("agent %d: %v", i, r)
		}
		ranges[i] = r
	}
	for i := range ranges {
		for j := range ranges {
			if i != j && ranges[i].Overlaps(ranges[j]) {
				t.Fatalf("agents %d and %d overlap: %v %v", i, j, ranges[i], ranges[j])
			}
		}
		if i > 0 && ranges[i].First != ranges[i-1].Last()+1 {
			t.Errorf("agent %d starts at %d, agent %d ends at %d", i, ranges[i].First, i-1, ranges[i-1].Last())
		}
	}
	// Every uid of agent 3 belongs to agent 3 alone.
	for uid := ranges[3].First - 1; uid <= ranges[3].Last()+1; uid++ {
		owners := 0
		for _, r := range ranges {
			if r.Contains(uid) {
				owners++
			}
		}
		inside := uid >= ranges[3].First && uid <= ranges[3].Last()
		if inside != ranges[3].Contains(uid) || owners != 1 {
			t.Fatalf("uid %d: %d owners, in agent 3 %v", uid, owners, ranges[3].Contains(uid))
		}
	}
}

func TestCallUIDRangeBounds(t *testing.T) {
	for _, bad := range []int{-1, math.MinInt, math.MaxInt, 524263} {
		if r, err := CallUIDRange(bad); err == nil {
			t.Errorf("index %d accepted: %v", bad, r)
		}
	}
	last, err := CallUIDRange(524262)
	if err != nil {
		t.Fatal(err)
	}
	if last.Last() >= 1<<31 || last.Last() < last.First {
		t.Errorf("the last range %v ends at %d", last, last.Last())
	}
}

func TestUIDRangeOverlaps(t *testing.T) {
	a := UIDRange{First: 10, Count: 5} // 10..14
	for _, c := range []struct {
		b    UIDRange
		want bool
	}{
		{UIDRange{First: 15, Count: 5}, false},
		{UIDRange{First: 5, Count: 5}, false},
		{UIDRange{First: 14, Count: 1}, true},
		{UIDRange{First: 5, Count: 6}, true},
		{UIDRange{First: 11, Count: 2}, true},
		{UIDRange{First: 0, Count: 100}, true},
		{UIDRange{First: 12, Count: 0}, false},
	} {
		if got := a.Overlaps(c.b); got != c.want || c.b.Overlaps(a) != c.want {
			t.Errorf("%v overlaps %v = %v, want %v", a, c.b, got, c.want)
		}
	}
}

// Issue 31: each deployment's call uids are its own. The default comes
// from the project name; [call_uids] sets it; an agent's override that
// overlaps another agent's range is refused.
func TestDeploymentCallUIDs(t *testing.T) {
	dep := fixture["deploy/deployment.toml"]
	d, err := loadFixture(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	base := ProjectCallUIDBase("test")
	if a, b := d.Agents[0].Sandbox.UIDs, d.Agents[1].Sandbox.UIDs; a != (UIDRange{First: base, Count: CallUIDsPerAgent}) ||
		b != (UIDRange{First: base + CallUIDsPerAgent, Count: CallUIDsPerAgent}) {
		t.Fatalf("default ranges %v %v, want from %d", a, b, base)
	}
	other, err := loadFixture(t, map[string]string{"deploy/deployment.toml": strings.Replace(dep, `project = "test"`, `project = "other"`, 1)})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range d.Agents {
		for _, b := range other.Agents {
			if a.Sandbox.UIDs.Overlaps(b.Sandbox.UIDs) {
				t.Errorf("projects test and other share uids: %v %v", a.Sandbox.UIDs, b.Sandbox.UIDs)
			}
		}
	}
	set, err := loadFixture(t, map[string]string{"deploy/deployment.toml": dep + "\n[call_uids]\nfirst = 700000\ncount = 1000\n"})
	if err != nil {
		t.Fatal(err)
	}
	if a, b := set.Agents[0].Sandbox.UIDs, set.Agents[1].Sandbox.UIDs; a.String() != "700000:1000" || b.String() != "701000:1000" {
		t.Fatalf("[call_uids] ranges %v %v", a, b)
	}
	for _, c := range []struct{ toml, want string }{
		{strings.Replace(dep, `scratch = "64MB"`, "scratch = \"64MB\"\ncall_uids = \"701000:16\"", 1) + "\n[call_uids]\nfirst = 700000\ncount = 1000\n",
			`range 701000:1000 overlaps agent "alpha"'s 701000:16`},
		{strings.Replace(dep, `scratch = "64MB"`, "scratch = \"64MB\"\ncall_uids = \"1000:16\"", 1), `below 65536`},
		{dep + "\n[call_uids]\nfirst = 100\n", `call_uids\.first: .*below 65536`},
	} {
		_, err := loadFixture(t, map[string]string{"deploy/deployment.toml": c.toml})
		if err == nil || !regexp.MustCompile(c.want).MatchString(err.Error()) {
			t.Errorf("want an error matching %q, got %v", c.want, err)
		}
	}
}
