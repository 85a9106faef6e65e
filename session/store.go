// Package session stores conversations as nanobot-format JSONL files: a
// metadata line, then one message per line. The file is also the durable
// turn's journal: entries carry (turn, entry ID) so appends are idempotent.
package session

import (
	"context"
	"time"

	"github.com/nanobot-durable/nanobot/chat"
)

// Session is one conversation, as loaded from its journal.
type Session struct {
	Key string
	// Kind is what the session is for ("": a chat; "dream", "heartbeat",
	// "subagent": sessions the agent keeps for itself), set by its first turn.
	Kind             string
	CreatedAt        time.Time
	UpdatedAt        time.Time
	Metadata         map[string]any
	LastConsolidated int
	Messages         []chat.Message
	// Problems lists lines that could not be read; they are skipped, never fatal.
	Problems []string
}

// Find returns the index of the entry written by turn with the given ID, or -1.
func (s *Session) Find(turn, entryID string) int {
	for i := len(s.Messages) - 1; i >= 0; i-- {
		m := s.Messages[i]
		if m.Turn == turn && m.EntryID == entryID {
			return i
		}
	}
	return -1
}

// Store is where sessions live. The JSONL files are the first backend; a
// database backend can follow without touching workflow code.
type Store interface {
	// Load reads a session; a missing session is empty, not an error.
	Load(ctx context.Context, key string) (*Session, error)
	// Append adds messages, skipping any whose (Turn, EntryID) is already
	// journaled; it returns how many were written.
	Append(ctx context.Context, key string, msgs ...chat.Message) (int, error)
	// Update runs fn on the loaded session and saves the result atomically.
	Update(ctx context.Context, key string, fn func(*Session) error) error
	// Claim records that a side-effecting step is about to act. It returns
	// false when the claim already existed (an earlier attempt got that far).
	Claim(ctx context.Context, key, turn, entryID string) (bool, error)
	// PutTurnData and TurnData keep per-turn blobs (the system prompt of a
	// turn) so every retry of a step reads the same bytes.
	PutTurnData(ctx context.Context, key, turn, name string, data []byte) error
	// AddTurnData stores a blob unless the turn has one by that name: the first write wins, so
	// a retried step keeps the bytes its first attempt stored.
	AddTurnData(ctx context.Context, key, turn, name string, data []byte) error
	TurnData(ctx context.Context, key, turn, name string) ([]byte, error)
	// PruneTurnData keeps the blobs of the newest keep turns only.
	PruneTurnData(ctx context.Context, key string, keep int) error
	// Path tells where the session lives, for people reading logs.
	Path(key string) string
}
