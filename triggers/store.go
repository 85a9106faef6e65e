// Package triggers keeps nanobot's local triggers: named, session-bound
// doors into a chat that a script opens with `nanobot trigger <id> "message"`
// (/trigger <name> makes one). They live in <workspace>/triggers/triggers.json
// in nanobot's format, so a workspace moved from nanobot keeps its triggers.
package triggers

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/nanobot-durable/nanobot/atomicfile"
)

// Trigger is one local trigger (nanobot's LocalTrigger, its JSON keys).
type Trigger struct {
	ID             string         `json:"id"`
	Name           string         `json:"name"`
	Enabled        bool           `json:"enabled"`
	Channel        string         `json:"channel"`
	ChatID         string         `json:"chatId"`
	SessionKey     string         `json:"sessionKey"`
	SenderID       string         `json:"senderId"`
	OriginMetadata map[string]any `json:"originMetadata"`
	CreatedAtMS    int64          `json:"createdAtMs"`
	UpdatedAtMS    int64          `json:"updatedAtMs"`
	LastRunAtMS    *int64         `json:"lastRunAtMs"`
	LastStatus     *string        `json:"lastStatus"`
	LastError      *string        `json:"lastError"`
	RunHistory     []any          `json:"runHistory"`
}

type file struct {
	Version  int       `json:"version"`
	Triggers []Trigger `json:"triggers"`
}

// Errors of Deliver's lookup (nanobot's texts).
var (
	ErrNotFound = errors.New("trigger not found")
	ErrDisabled = errors.New("trigger is disabled")
)

// Store is one workspace's triggers.
type Store struct {
	path string
	mu   sync.Mutex
}

// Open is the trigger store of a workspace.
func Open(workspace string) *Store {
	return &Store{path: filepath.Join(workspace, "triggers", "triggers.json")}
}

// Path is the store's file.
func (s *Store) Path() string { return s.path }

func (s *Store) load() (file, error) {
	var f file
	data, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return file{Version: 1}, nil
	}
	if err != nil {
		return f, fmt.Errorf("trigger store %s: %w", s.path, err)
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return f, fmt.Errorf("trigger store %s could not be read: %w", s.path, err)
	}
	return f, nil
}

// idAlphabet is nanobot's: no 0/O, 1/I.
const idAlphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"

func newID(taken map[string]bool) (string, error) {
	for range 100 {
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", err
		}
		for i := range b {
			b[i] = idAlphabet[int(b[i])%len(idAlphabet)]
		}
		if id := "trg_" + string(b[:]); !taken[id] {
			return id, nil
		}
	}
	return "", errors.New("could not allocate a unique trigger id")
}

// cleanName is nanobot's: whitespace folded, "Local trigger" when empty, 120 runes.
func cleanName(name string) string {
	n := []rune(strings.Join(strings.Fields(name), " "))
	if len(n) == 0 {
		return "Local trigger"
	}
	return string(n[:min(len(n), 120)])
}

// Create adds a trigger bound to a chat and its session.
func (s *Store) Create(name, channel, chatID, sessionKey string) (Trigger, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if channel == "" || chatID == "" || sessionKey == "" {
		return Trigger{}, errors.New("channel, chat_id, and session_key are required")
	}
	f, err := s.load()
	if err != nil {
		return Trigger{}, err
	}
	taken := map[string]bool{}
	for _, t := range f.Triggers {
		taken[t.ID] = true
	}
	id, err := newID(taken)
	if err != nil {
		return Trigger{}, err
	}
	now := time.Now().UnixMilli()
	t := Trigger{ID: id, Name: cleanName(name), Enabled: true, Channel: channel, ChatID: chatID, SessionKey: sessionKey,
		SenderID: "trigger", OriginMetadata: map[string]any{}, CreatedAtMS: now, UpdatedAtMS: now, RunHistory: []any{}}
	f.Version, f.Triggers = 1, append(f.Triggers, t)
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return Trigger{}, err
	}
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return Trigger{}, fmt.Errorf("trigger store %s: %w", s.path, err)
	}
	if err := atomicfile.Write(s.path, data, 0o600); err != nil {
		return Trigger{}, fmt.Errorf("trigger store %s: %w", s.path, err)
	}
	return t, nil
}

// Get finds an enabled trigger by ID.
func (s *Store) Get(id string) (Trigger, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := s.load()
	if err != nil {
		return Trigger{}, err
	}
	for _, t := range f.Triggers {
		if t.ID == strings.TrimSpace(id) {
			if !t.Enabled {
				return Trigger{}, fmt.Errorf("%w: %s", ErrDisabled, t.ID)
			}
			return t, nil
		}
	}
	return Trigger{}, fmt.Errorf("%w: %s", ErrNotFound, id)
}

// Content is what a delivery says in its session (nanobot's history line).
func Content(t Trigger, message string) string {
	return "Local trigger received: " + t.Name + "\n\n" + message
}
