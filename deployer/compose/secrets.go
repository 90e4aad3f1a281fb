package compose

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/astraldeep/astralvessel-go/deployer/spec"
)

// Secrets are the generated secrets of one deployment.
type Secrets struct {
	SandboxMaster string
	EgressToken   string
	SearchSecret  string
	Sandbox       map[string]string // agent id -> its token
}

// WriteSecrets creates outDir/.generated and the secret files in it (mode
// 0600). Files that exist are kept, so tokens stay the same across deploys;
// per-agent tokens are derived from the master token, and tokens of agents
// no longer in the deployment are removed. When uid/gid differ from the
// caller's and the caller is root, the files are given to them so the
// containers (which run as uid:gid) can read them.
func WriteSecrets(outDir string, d *spec.Deployment, uid, gid int) (*Secrets, error) {
	dir := filepath.Join(outDir, GeneratedDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("secrets: %w", err)
	}
	s := &Secrets{Sandbox: map[string]string{}}
	var err error
	if s.SandboxMaster, err = keepOrCreate(dir, "sandbox-master.token"); err != nil {
		return nil, err
	}
	if s.EgressToken, err = keepOrCreate(dir, "egress.token"); err != nil {
		return nil, err
	}
	if s.SearchSecret, err = keepOrCreate(dir, "search.secret"); err != nil {
		return nil, err
	}
	keep := map[string]bool{"sandbox-master.token": true, "egress.token": true, "search.secret": true}
	for _, a := range d.Agents {
		name := "sandbox-" + a.ID + ".token"
		tok := spec.DeriveToken(s.SandboxMaster, "sandbox/"+a.ID)
		if err := writeSecret(filepath.Join(dir, name), tok); err != nil {
			return nil, err
		}
		s.Sandbox[a.ID] = tok
		keep[name] = true
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("secrets: %w", err)
	}
	for _, e := range entries {
		if n := e.Name(); strings.HasPrefix(n, "sandbox-") && strings.HasSuffix(n, ".token") && !keep[n] {
			if err := os.Remove(filepath.Join(dir, n)); err != nil {
				return nil, fmt.Errorf("secrets: remove stale %s: %w", n, err)
			}
		}
	}
	if os.Geteuid() == 0 && (uid != 0 || gid != 0) {
		for name := range keep {
			if err := os.Chown(filepath.Join(dir, name), uid, gid); err != nil {
				return nil, fmt.Errorf("secrets: give %s to %d:%d: %w", name, uid, gid, err)
			}
		}
		if err := os.Chown(dir, uid, gid); err != nil {
			return nil, fmt.Errorf("secrets: %w", err)
		}
	}
	return s, nil
}

func keepOrCreate(dir, name string) (string, error) {
	p := filepath.Join(dir, name)
	b, err := os.ReadFile(p)
	if err == nil {
		if v := strings.TrimSpace(string(b)); len(v) >= 32 {
			return v, os.Chmod(p, 0o600)
		}
		return "", fmt.Errorf("secrets: %s is shorter than 32 characters; delete it to generate a new one", p)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("secrets: %w", err)
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", fmt.Errorf("secrets: %w", err)
	}
	v := hex.EncodeToString(raw)
	return v, writeSecret(p, v)
}

func writeSecret(p, v string) error {
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, []byte(v), 0o600); err != nil {
		return fmt.Errorf("secrets: %w", err)
	}
	if err := os.Chmod(tmp, 0o600); err != nil {
		return fmt.Errorf("secrets: %w", err)
	}
	if err := os.Rename(tmp, p); err != nil {
		return fmt.Errorf("secrets: %w", err)
	}
	return nil
}
