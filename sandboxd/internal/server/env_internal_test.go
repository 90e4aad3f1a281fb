package server

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// TestCallEnvSkipsUserDatabase: bash started with a call's environment as
// a uid no user database knows (as calls run) loads no NSS module: with
// SHELL set it has no reason to look its user up. The loader's own trace
// (LD_DEBUG) shows every library it maps, dlopen'd ones included.
func TestCallEnvSkipsUserDatabase(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("this test starts bash as another uid: run it as root (CI does)")
	}
	ws, err := os.MkdirTemp("", "callenv")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(ws) })
	if err := os.Chmod(ws, 0o777); err != nil { // t.TempDir's parent is root's alone
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "-c", "echo x > note.txt && cat note.txt")
	cmd.Env = append(env(ws, ""), "LD_DEBUG=files")
	cmd.Dir = ws
	const uid = 60999 // in no user database here (checked below)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bash: %v\n%s", err, out)
	}
	if !bytes.Contains(out, []byte("libc.so.6")) || !bytes.Contains(out, []byte("x\n")) {
		t.Fatalf("no loader trace or no output:\n%s", out)
	}
	if bytes.Contains(out, []byte("libnss_")) {
		t.Fatalf("bash looked its user up through NSS:\n%s", out)
	}
	if passwd, err := os.ReadFile("/etc/passwd"); err == nil && bytes.Contains(passwd, []byte(":60999:")) {
		t.Fatal("uid 60999 is in /etc/passwd: pick another for this test")
	}
}

// TestCallLocaleFoundAsNamed: the call's LANG names an installed locale
// directory as it is spelled (glibc looks there first, and only then under
// a normalised name), and it is UTF-8.
func TestCallLocaleFoundAsNamed(t *testing.T) {
	var lang string
	for _, kv := range env("/", "") {
		if v, ok := strings.CutPrefix(kv, "LANG="); ok {
			lang = v
		}
	}
	if st, err := os.Stat("/usr/lib/locale/" + lang + "/LC_CTYPE"); err != nil || st.IsDir() {
		t.Fatalf("LANG=%s is not an installed locale under that name: %v", lang, err)
	}
	cmd := exec.Command("locale", "charmap")
	cmd.Env = env("/", "")
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "UTF-8" {
		t.Fatalf("locale charmap: %q %v", out, err)
	}
}

// TestLocaleName: C.UTF-8 is named as it is installed, C.UTF-8 when both
// or neither spelling is there.
func TestLocaleName(t *testing.T) {
	for _, c := range []struct {
		dirs []string
		want string
	}{
		{[]string{"C.utf8"}, "C.utf8"},
		{[]string{"C.UTF-8"}, "C.UTF-8"},
		{[]string{"C.UTF-8", "C.utf8"}, "C.UTF-8"},
		{nil, "C.UTF-8"},
	} {
		root := t.TempDir()
		for _, d := range c.dirs {
			if err := os.Mkdir(root+"/"+d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if got := localeName(root); got != c.want {
			t.Errorf("%v: %s, want %s", c.dirs, got, c.want)
		}
	}
}
