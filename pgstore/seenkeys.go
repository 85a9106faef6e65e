package pgstore

import (
	"fmt"

	"github.com/nanobot-durable/nanobot/channels"
)

// SeenKeys is channels.SeenKeys on the database: one set of the newest n
// keys, shared by every gateway, so a redelivery that reaches another
// gateway is still taken in once. A database error is logged and the keys
// count as new: a message answered twice beats a message lost.
type SeenKeys struct {
	db  *DB
	set string
	n   int
}

var _ channels.SeenKeys = (*SeenKeys)(nil)

// SeenKeys is the dedupe set named set, keeping its newest n keys.
func (db *DB) SeenKeys(set string, n int) *SeenKeys {
	return &SeenKeys{db: db, set: set, n: max(n, 1)}
}

// Has reports whether key was recorded.
func (s *SeenKeys) Has(key string) bool {
	if key == "" {
		return false
	}
	ctx, cancel := bounded()
	defer cancel()
	var ok bool
	err := s.db.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM channel_keys WHERE set_name = $1 AND key = $2)`, s.set, key).Scan(&ok)
	if err != nil {
		s.warn("read", err)
	}
	return ok
}

// Add records the keys and reports whether any was already there; the
// insert itself decides, so two gateways adding one key see one winner.
func (s *SeenKeys) Add(keys ...string) (dup bool) {
	var fresh []string
	for _, k := range keys {
		if k != "" {
			fresh = append(fresh, k)
		}
	}
	if len(fresh) == 0 {
		return false
	}
	ctx, cancel := bounded()
	defer cancel()
	var added int
	err := s.db.pool.QueryRow(ctx, `WITH ins AS (
		INSERT INTO channel_keys (set_name, key) SELECT $1, k FROM unnest($2::text[]) WITH ORDINALITY AS u(k, i) ORDER BY i
		ON CONFLICT DO NOTHING RETURNING 1) SELECT count(*) FROM ins`, s.set, fresh).Scan(&added)
	if err != nil {
		s.warn("record", err)
		return false
	}
	if added > 0 {
		_, err := s.db.pool.Exec(ctx, `DELETE FROM channel_keys WHERE set_name = $1 AND seq <= (
			SELECT seq FROM channel_keys WHERE set_name = $1 ORDER BY seq DESC OFFSET $2 LIMIT 1)`, s.set, s.n)
		if err != nil {
			s.warn("trim", err)
		}
	}
	return added < len(fresh)
}

// Claim records key now: of two gateways given one event, the insert picks one.
func (s *SeenKeys) Claim(key string) bool { return key != "" && !s.Add(key) }

// Done has nothing left to record: Claim did.
func (s *SeenKeys) Done(string) {}

// Forget drops key, so its redelivery is taken in by whichever gateway gets it.
func (s *SeenKeys) Forget(key string) {
	ctx, cancel := bounded()
	defer cancel()
	if _, err := s.db.pool.Exec(ctx, `DELETE FROM channel_keys WHERE set_name = $1 AND key = $2`, s.set, key); err != nil {
		s.warn("forget", err)
	}
}

func (s *SeenKeys) warn(what string, err error) {
	s.db.log.Warn(fmt.Sprintf("cannot %s the handled keys", what), "set", s.set, "database", s.db.where, "error", err)
}
