// Package history is an optional application-side conversation store for
// AstralVessel clients: one JSON file per conversation, holding the messages
// to send as the next turn's history. The vessel keeps no history, so an
// application that wants one keeps it here (or in its own database).
package history

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/astraldeep/astralvessel-go/vessel/client"
)

// validID matches the spec's conversation ids (contextId): 1 to 128 of
// letters, digits and . _ : -. It also keeps ids safe as file names.
var validID = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)

// Conversation is one stored conversation.
type Conversation struct {
	ID       string           `json:"id"`
	Agent    string           `json:"agent,omitempty"`
	Updated  time.Time        `json:"updated"`
	Messages []client.Message `json:"messages"`
}

// Store keeps conversations as files in a directory. It is safe for
// concurrent use within one process; writes are atomic (temporary file,
// fsync, rename), so a crash leaves the old or the new file.
type Store struct {
	dir string
	mu  sync.Mutex
}

// Open returns a store in dir, creating it (0700) if needed.
func Open(dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("history: create %s: %w", dir, err)
	}
	return &Store{dir: dir}, nil
}

// ErrBadID is returned for a conversation id outside the spec's alphabet.
var ErrBadID = errors.New("history: invalid conversation id")

func (s *Store) path(id string) (string, error) {
	if !validID.MatchString(id) || id == "." || id == ".." {
		return "", fmt.Errorf("%w: %q", ErrBadID, id)
	}
	// ':' is valid in ids but awkward in file names on some systems.
	return filepath.Join(s.dir, strings.ReplaceAll(id, ":", "%3A")+".json"), nil
}

// Load returns the conversation id; a missing one is empty, not an error.
func (s *Store) Load(id string) (*Conversation, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.load(id)
}

func (s *Store) load(id string) (*Conversation, error) {
	p, err := s.path(id)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return &Conversation{ID: id}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("history: read %s: %w", p, err)
	}
	var c Conversation
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("history: parse %s: %w", p, err)
	}
	for i, m := range c.Messages {
		c.Messages[i] = client.Message(client.Normalize(map[string]any(m)).(map[string]any))
	}
	c.ID = id
	return &c, nil
}

// Messages returns the stored messages of conversation id.
func (s *Store) Messages(id string) ([]client.Message, error) {
	c, err := s.Load(id)
	if err != nil {
		return nil, err
	}
	return c.Messages, nil
}

// Append adds msgs (a turn's returned transcript) to conversation id.
func (s *Store) Append(id, agent string, msgs ...client.Message) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.load(id)
	if err != nil {
		return err
	}
	if agent != "" {
		c.Agent = agent
	}
	c.Messages = append(c.Messages, msgs...)
	c.Updated = time.Now().UTC()
	return s.write(c)
}

// Delete removes conversation id; a missing one is not an error.
func (s *Store) Delete(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.path(id)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("history: delete %s: %w", p, err)
	}
	return nil
}

func (s *Store) write(c *Conversation) error {
	p, err := s.path(c.ID)
	if err != nil {
		return err
	}
	if c.Messages == nil {
		c.Messages = []client.Message{}
	}
	b, err := json.MarshalIndent(c, "", " ")
	if err != nil {
		return fmt.Errorf("history: encode %s: %w", c.ID, err)
	}
	tmp, err := os.CreateTemp(s.dir, ".tmp-*.json")
	if err != nil {
		return fmt.Errorf("history: temp file: %w", err)
	}
	defer os.Remove(tmp.Name()) // no-op after a successful rename
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("history: write %s: %w", tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("history: sync %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("history: close %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		return fmt.Errorf("history: rename into %s: %w", p, err)
	}
	return nil
}
