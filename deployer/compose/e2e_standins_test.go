package compose

// The e2e's test stand-ins (deploy/e2e.sh): the scripted model and the OTLP
// sink run beside the generated file, not in it, so their identities and
// lockdown are checked on the script.

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// e2eStandinScript is what deploy/e2e.sh says about its test stand-ins:
// each one's uid (the <name>_uid= lines) and the docker run options they all
// get (standin_opts).
type e2eStandinScript struct {
	uids map[string]uint32
	opts string
	text string
}

func e2eStandins(t *testing.T) e2eStandinScript {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "deploy", "e2e.sh"))
	if err != nil {
		t.Fatal(err)
	}
	st := e2eStandinScript{uids: map[string]uint32{}, text: string(b)}
	lines := strings.Split(st.text, "\n")
	for i, line := range lines {
		if name, v, ok := strings.Cut(line, "_uid="); ok && (name == "model" || name == "sink") {
			u, err := strconv.ParseUint(v, 10, 32)
			if err != nil {
				t.Fatalf("deploy/e2e.sh: %q: %v", line, err)
			}
			st.uids[name] = uint32(u)
		}
		if strings.HasPrefix(line, "standin_opts=(") {
			for j := i; j < len(lines); j++ {
				st.opts += lines[j] + " "
				if strings.HasSuffix(strings.TrimSpace(lines[j]), ")") {
					break
				}
			}
		}
	}
	if len(st.uids) != 2 || st.opts == "" {
		t.Fatalf("deploy/e2e.sh: stand-in uids %v, standin_opts %q: want model_uid=, sink_uid= and standin_opts=(...)", st.uids, st.opts)
	}
	return st
}

// TestE2EStandinsLockedDown: the e2e's test stand-ins run outside the
// Compose project (docker run), locked down like a generated service: a uid
// of their own that no service shares, read-only root, no capability, no new
// privileges, memory and pid limits. (The e2e checks the same with docker
// inspect once they run.)
func TestE2EStandinsLockedDown(t *testing.T) {
	st := e2eStandins(t)
	for _, opt := range []string{"--read-only", "--cap-drop ALL", "--security-opt no-new-privileges", "--memory "} {
		if !strings.Contains(st.opts, opt) {
			t.Errorf("deploy/e2e.sh standin_opts %q lacks %s", st.opts, opt)
		}
	}
	if strings.Contains(st.opts, "--cap-add") || strings.Contains(st.opts, "--privileged") {
		t.Errorf("deploy/e2e.sh standin_opts %q grants privileges", st.opts)
	}
	if st.uids["model"] == st.uids["sink"] {
		t.Errorf("the two stand-ins share uid %d", st.uids["model"])
	}
	if st.uids["sink"] < ScriptedModelUID || st.uids["sink"] >= ProbeUID {
		t.Errorf("the OTLP sink stand-in's uid %d lies outside the fixed block of service uids", st.uids["sink"])
	}
	for n, u := range ServiceUIDs {
		if n != "scripted-model" && uint32(u) == st.uids["sink"] {
			t.Errorf("the OTLP sink stand-in shares %s's uid %d", n, u)
		}
	}
	// Every docker run/create of a stand-in names its uid, the shared
	// options and a pid limit, and none joins the Compose project.
	var starts int
	for _, line := range strings.Split(st.text, "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || f[0] != "docker" || (f[1] != "run" && f[1] != "create") || !strings.Contains(line, "--name \"$") || !strings.Contains(line, "_name\"") {
			continue
		}
		starts++
		for _, want := range []string{`--user "$`, `"${standin_opts[@]}"`, "--pids-limit "} {
			if !strings.Contains(line, want) {
				t.Errorf("deploy/e2e.sh: %q lacks %s", strings.TrimSpace(line), want)
			}
		}
		if strings.Contains(line, "com.docker.compose") {
			t.Errorf("deploy/e2e.sh: %q labels a stand-in into the Compose project", strings.TrimSpace(line))
		}
	}
	if starts != 2 {
		t.Errorf("deploy/e2e.sh starts %d stand-ins with docker run/create, want 2 (the scripted model, the OTLP sink)", starts)
	}
}
