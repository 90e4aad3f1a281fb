package localstack

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/astraldeep/astralvessel-go/deployer/compose"
	"github.com/astraldeep/astralvessel-go/runtime/cardkeys"
)

// keys are the stack's secrets, kept in the state dir so they stay the
// same across restarts.
type keys struct {
	app, appDigest, master, egress, cardKeyFile string
	// operatorFile holds the operator API's token (STATE/operator.token),
	// which the vessels read and `astralvessel turns` finds.
	operatorFile string
}

func loadKeys(stateDir string) (*keys, error) {
	var k keys
	var err error
	if k.app, err = secret(stateDir, "app.key", "avk_local_"); err != nil {
		return nil, err
	}
	if k.master, err = secret(stateDir, "sandbox-master.token", ""); err != nil {
		return nil, err
	}
	if k.egress, err = secret(stateDir, "egress.token", ""); err != nil {
		return nil, err
	}
	if _, err = secret(stateDir, compose.OperatorTokenFile, ""); err != nil {
		return nil, err
	}
	k.operatorFile = filepath.Join(stateDir, compose.OperatorTokenFile)
	if k.cardKeyFile, err = cardKeyFile(stateDir); err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(k.app))
	k.appDigest = hex.EncodeToString(sum[:])
	return &k, nil
}

// secret returns the secret in stateDir/name, creating it (0600) on first use.
func secret(stateDir, name, prefix string) (string, error) {
	p := filepath.Join(stateDir, name)
	b, err := os.ReadFile(p)
	if err == nil && len(strings.TrimSpace(string(b))) > 0 {
		return strings.TrimSpace(string(b)), nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("localstack: read %s: %w", p, err)
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", fmt.Errorf("localstack: random: %w", err)
	}
	s := prefix + hex.EncodeToString(raw)
	if err := os.WriteFile(p, []byte(s+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("localstack: write %s: %w", p, err)
	}
	return s, nil
}

// cardKeyFile returns the path of the stack's card-signing key set
// (STATE/card-signing.jwks, 0600), created on first use and checked on
// every start; only the vessel is given it.
func cardKeyFile(stateDir string) (string, error) {
	p := filepath.Join(stateDir, compose.CardKeyFile)
	b, err := os.ReadFile(p)
	if err == nil {
		if _, err := cardkeys.ParseKeys(b); err != nil {
			return "", fmt.Errorf("localstack: %s: %w; fix it or delete it to generate a new key", p, err)
		}
		return p, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("localstack: read %s: %w", p, err)
	}
	k, err := cardkeys.Generate()
	if err != nil {
		return "", fmt.Errorf("localstack: %w", err)
	}
	if err := os.WriteFile(p, k, 0o600); err != nil {
		return "", fmt.Errorf("localstack: write %s: %w", p, err)
	}
	return p, nil
}
