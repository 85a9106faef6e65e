package pgstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"

	"github.com/jackc/pgx/v5"
)

// turnDataCache keeps the turn blobs this process wrote or read: a turn reads its system prompt
// and offered tools several times (RESTORE's estimate, the model call, MEASURE), and the callers
// write each blob once per turn (only when it is missing), so a kept blob is the stored one.
// Safe for concurrent use.
type turnDataCache struct {
	mu    sync.Mutex
	items map[turnDataKey][]byte
}

type turnDataKey struct{ session, turn, name string }

// turnDataCacheSize bounds the blobs kept; at the bound the cache starts over.
const turnDataCacheSize = 1024

func (c *turnDataCache) get(k turnDataKey) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	data, ok := c.items[k]
	return data, ok
}

func (c *turnDataCache) put(k turnDataKey, data []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.items == nil || len(c.items) >= turnDataCacheSize {
		c.items = map[turnDataKey][]byte{}
	}
	c.items[k] = data
}

// forget drops a session's blobs: of the given turns, or all of them when turns is nil.
func (c *turnDataCache) forget(session string, turns []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.items {
		if k.session == session && (turns == nil || slices.Contains(turns, k.turn)) {
			delete(c.items, k)
		}
	}
}

// PutTurnData stores a per-turn blob; the last put wins.
func (s *Sessions) PutTurnData(ctx context.Context, key, turn, name string, data []byte) error {
	_, err := s.db.pool.Exec(ctx, `INSERT INTO session_turn_data (session_key, turn, name, data) VALUES ($1, $2, $3, $4)
		ON CONFLICT (session_key, turn, name) DO UPDATE SET data = EXCLUDED.data, written_at = clock_timestamp()`, key, turn, name, data)
	if err != nil {
		return fmt.Errorf("write %s of turn %s in session %s: %w", name, turn, key, err)
	}
	s.db.turnData.put(turnDataKey{key, turn, name}, append([]byte(nil), data...))
	return nil
}

// AddTurnData stores a per-turn blob unless there is one by that name, in one statement.
func (s *Sessions) AddTurnData(ctx context.Context, key, turn, name string, data []byte) error {
	tag, err := s.db.pool.Exec(ctx, `INSERT INTO session_turn_data (session_key, turn, name, data) VALUES ($1, $2, $3, $4)
		ON CONFLICT (session_key, turn, name) DO NOTHING`, key, turn, name, data)
	if err != nil {
		return fmt.Errorf("write %s of turn %s in session %s: %w", name, turn, key, err)
	}
	if tag.RowsAffected() == 1 { // else another writer's bytes are there: read when asked
		s.db.turnData.put(turnDataKey{key, turn, name}, append([]byte(nil), data...))
	}
	return nil
}

// TurnData reads a per-turn blob; a missing blob is os.ErrNotExist.
func (s *Sessions) TurnData(ctx context.Context, key, turn, name string) ([]byte, error) {
	k := turnDataKey{key, turn, name}
	if data, ok := s.db.turnData.get(k); ok {
		return append([]byte(nil), data...), nil
	}
	var data []byte
	err := s.db.pool.QueryRow(ctx, `SELECT data FROM session_turn_data WHERE session_key = $1 AND turn = $2 AND name = $3`, key, turn, name).Scan(&data)
	if errors.Is(err, pgx.ErrNoRows) {
		err = os.ErrNotExist
	}
	if err != nil {
		return nil, fmt.Errorf("read %s of turn %s in session %s: %w", name, turn, key, err)
	}
	s.db.turnData.put(k, append([]byte(nil), data...))
	return data, nil
}

// PruneTurnData keeps the blobs of the keep most recently written turns.
func (s *Sessions) PruneTurnData(ctx context.Context, key string, keep int) error {
	rows, err := s.db.pool.Query(ctx, `DELETE FROM session_turn_data WHERE session_key = $1 AND turn NOT IN (
		SELECT turn FROM session_turn_data WHERE session_key = $1 GROUP BY turn ORDER BY max(written_at) DESC LIMIT $2)
		RETURNING turn`, key, max(keep, 0))
	var pruned []string
	if err == nil {
		pruned, err = pgx.CollectRows(rows, pgx.RowTo[string])
	}
	if err != nil {
		return fmt.Errorf("prune turn data of session %s: %w", key, err)
	}
	if len(pruned) > 0 {
		s.db.turnData.forget(key, pruned)
	}
	return nil
}
