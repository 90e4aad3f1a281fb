package settings

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/astraldeep/astralvessel-go/runtime/envfile"
)

// ReadPrompt returns the agent's briefing: its PromptFiles, read now and
// separated by blank lines, so prompt edits need no redeploy.
func ReadPrompt(agent *Agent) (string, error) {
	if agent == nil || agent.Manifest == nil {
		return "", errors.New("read prompt: agent has no loaded manifest")
	}
	parts := make([]string, 0, len(agent.PromptFiles))
	for _, f := range agent.PromptFiles {
		b, err := os.ReadFile(filepath.Join(agent.PackageDir, f))
		if err != nil {
			return "", fmt.Errorf("read prompt of agent %s: %w", agent.ID, err)
		}
		parts = append(parts, strings.TrimRight(string(b), "\n"))
	}
	return strings.Join(parts, "\n\n"), nil
}

// ResolveAPIKey returns the model key the manifest names: for "env:NAME"
// the value of NAME, or of the file NAME_FILE names (envfile.LookupFile),
// else the literal string.
func (m *Model) ResolveAPIKey(env func(name string) (string, bool)) (string, error) {
	name, ok := strings.CutPrefix(m.APIKey, "env:")
	if !ok {
		return m.APIKey, nil
	}
	v, found, err := envfile.LookupFile(env, name)
	if err != nil {
		return "", fmt.Errorf("model.api_key: %w", err)
	}
	if !found {
		return "", fmt.Errorf("model.api_key: environment variable %s is not set", name)
	}
	return v, nil
}
