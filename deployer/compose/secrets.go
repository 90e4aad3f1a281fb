package compose

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/astraldeep/astralvessel-go/deployer/spec"
	"github.com/astraldeep/astralvessel-go/runtime/cardkeys"
)

// CardKeyFile is the vessel's card-signing key set (a JWK set of EC P-256
// private keys, see runtime/cardkeys), mounted into the vessel only.
const CardKeyFile = "card-signing.jwks"

// OperatorTokenFile is the operator API's token (docs/operations.md,
// "Running turns"): the operator's copy, which `astralvessel turns` and
// `cancel` read from the deploy folder; the vessel reads its own copy,
// VesselOperatorTokenFile.
const (
	OperatorTokenFile       = "operator.token"
	VesselOperatorTokenFile = "vessel-operator.token"
)

// Secrets are the generated secrets of one deployment.
type Secrets struct {
	SandboxMaster string
	EgressToken   string
	OperatorToken string
	SearchSecret  string
	Sandbox       map[string]string // agent id -> its token
}

// SecretOwners maps each secret file of d to the uid (and gid, the same
// number) of the one service that reads it; a file mounted into two
// services would need a shared group or wider mode, so the vessel gets its
// own copy of the egress token. Sandbox tokens belong to root, as sandboxd
// runs as root and its calls never do.
func SecretOwners(d *spec.Deployment) map[string]int {
	owners := map[string]int{
		"sandbox-master.token":  VesselUID,
		"vessel-egress.token":   VesselUID,
		VesselOperatorTokenFile: VesselUID,
		"egress.token":          EgressUID,
		"search.secret":         SearchUID,
		SearchProxyFile:         SearchUID,
		WebClientsFile:          EgressUID,
		CardKeyFile:             VesselUID,
	}
	for _, a := range d.Agents {
		owners["sandbox-"+a.ID+".token"] = 0
	}
	return owners
}

// WriteSecrets creates outDir/.generated and the secret files in it (mode
// 0600). Files that exist are kept, so tokens stay the same across deploys;
// per-agent tokens are derived from the master token, and tokens of agents
// no longer in the deployment are removed. Run as root, it gives each file
// to the service that reads it (SecretOwners); otherwise the files stay the
// caller's and it reports false, and the operator must hand them over
// (ChownCommands) before the containers can read them.
func WriteSecrets(outDir string, d *spec.Deployment) (*Secrets, bool, error) {
	dir := filepath.Join(outDir, GeneratedDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, false, fmt.Errorf("secrets: %w", err)
	}
	s := &Secrets{Sandbox: map[string]string{}}
	var err error
	if s.SandboxMaster, err = keepOrCreate(dir, "sandbox-master.token"); err != nil {
		return nil, false, err
	}
	if s.EgressToken, err = keepOrCreate(dir, "egress.token"); err != nil {
		return nil, false, err
	}
	if err := writeSecret(filepath.Join(dir, "vessel-egress.token"), s.EgressToken); err != nil {
		return nil, false, err
	}
	// The operator's copy stays the deployer's (under sudo, the sudo
	// user's); the vessel's copy is given to the vessel.
	if s.OperatorToken, err = keepOrCreate(dir, OperatorTokenFile); err != nil {
		return nil, false, err
	}
	if err := writeSecret(filepath.Join(dir, VesselOperatorTokenFile), s.OperatorToken); err != nil {
		return nil, false, err
	}
	if s.SearchSecret, err = keepOrCreate(dir, "search.secret"); err != nil {
		return nil, false, err
	}
	if err := keepOrCreateCardKey(filepath.Join(dir, CardKeyFile)); err != nil {
		return nil, false, err
	}
	// The egress's clients and the search container's proxy credentials
	// follow deployment.toml and the egress token, so they are rewritten
	// on every deploy.
	clients, err := spec.WebClients(d)
	if err != nil {
		return nil, false, err
	}
	if err := writeSecret(filepath.Join(dir, WebClientsFile), string(clients)); err != nil {
		return nil, false, err
	}
	if err := writeSecret(filepath.Join(dir, SearchProxyFile), spec.SearchProxyURL(s.EgressToken, egressProxyURL)); err != nil {
		return nil, false, err
	}
	owners := SecretOwners(d)
	for _, a := range d.Agents {
		name := "sandbox-" + a.ID + ".token"
		tok := spec.DeriveToken(s.SandboxMaster, "sandbox/"+a.ID)
		if err := writeSecret(filepath.Join(dir, name), tok); err != nil {
			return nil, false, err
		}
		s.Sandbox[a.ID] = tok
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, false, fmt.Errorf("secrets: %w", err)
	}
	for _, e := range entries {
		if _, ok := owners[e.Name()]; !ok && strings.HasPrefix(e.Name(), "sandbox-") && strings.HasSuffix(e.Name(), ".token") {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return nil, false, fmt.Errorf("secrets: remove stale %s: %w", e.Name(), err)
			}
		}
	}
	if os.Geteuid() != 0 {
		return s, false, nil
	}
	// The folder is root's (0700; older deploys gave it to 65532): Compose
	// bind-mounts each file, so no container needs to pass through it.
	if err := os.Chown(dir, 0, 0); err != nil {
		return nil, false, fmt.Errorf("secrets: %w", err)
	}
	for name, uid := range owners {
		if err := os.Chown(filepath.Join(dir, name), uid, uid); err != nil {
			return nil, false, fmt.Errorf("secrets: give %s to %d:%d: %w", name, uid, uid, err)
		}
	}
	if err := giveToSudoUser(filepath.Join(dir, OperatorTokenFile)); err != nil {
		return nil, false, err
	}
	return s, true, nil
}

// ChownCommands are the commands that give d's secret files in outDir to
// their services (and its records folders to theirs and the operator group), for an operator who deployed without root.
func ChownCommands(outDir string, d *spec.Deployment) []string {
	cmds := chownCommands(filepath.Join(outDir, GeneratedDir), SecretOwners(d), -1)
	return append(cmds, chownCommands(filepath.Join(outDir, RecordsDir), RecordOwners(d), OperatorGID)...)
}

// chownCommands gives each name in dir to its uid and to gid (-1: the
// group of the uid's number), in name order.
func chownCommands(dir string, owners map[string]int, gid int) []string {
	names := make([]string, 0, len(owners))
	for n := range owners {
		names = append(names, n)
	}
	sort.Strings(names)
	cmds := make([]string, len(names))
	for i, n := range names {
		g := gid
		if g < 0 {
			g = owners[n]
		}
		cmds[i] = fmt.Sprintf("sudo chown %d:%d %s", owners[n], g, filepath.Join(dir, n))
	}
	return cmds
}

// giveToSudoUser gives p to the user who ran the deploy through sudo
// (SUDO_UID and SUDO_GID), so that user can run `astralvessel turns`
// without root; without sudo it stays root's.
func giveToSudoUser(p string) error {
	uid, err1 := strconv.Atoi(os.Getenv("SUDO_UID"))
	gid, err2 := strconv.Atoi(os.Getenv("SUDO_GID"))
	if err1 != nil || err2 != nil || uid <= 0 {
		return nil
	}
	if err := os.Chown(p, uid, gid); err != nil {
		return fmt.Errorf("secrets: give %s to the sudo user %d: %w", p, uid, err)
	}
	return nil
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

// keepOrCreateCardKey keeps a card-signing key set that parses (the
// operator may have rotated it, see docs/a2a.md) and creates one otherwise.
func keepOrCreateCardKey(p string) error {
	b, err := os.ReadFile(p)
	if err == nil {
		if _, err := cardkeys.ParseKeys(b); err != nil {
			return fmt.Errorf("secrets: %s: %w; fix it or delete it to generate a new key", p, err)
		}
		if err := os.Chmod(p, 0o600); err != nil {
			return fmt.Errorf("secrets: %w", err)
		}
		return nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("secrets: %w", err)
	}
	k, err := cardkeys.Generate()
	if err != nil {
		return fmt.Errorf("secrets: %w", err)
	}
	return writeSecret(p, string(k))
}

func writeSecret(p, v string) error {
	if err := writeFile(p, []byte(v), 0o600); err != nil {
		return fmt.Errorf("secrets: %w", err)
	}
	return nil
}
