package pgstore

import (
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/nanobot-durable/nanobot/usage"
)

// Usage is usage.Store on the database: one row per (session, turn, call).
type Usage struct{ db *DB }

var _ usage.Store = (*Usage)(nil)

// Usage is the usage store of the database.
func (db *DB) Usage() *Usage { return &Usage{db: db} }

// Where names the database.
func (u *Usage) Where() string { return u.db.where }

// Add records one call; a retried call replaces its figures and keeps its place.
func (u *Usage) Add(r usage.Record) error {
	ctx, cancel := bounded()
	defer cancel()
	_, err := u.db.pool.Exec(ctx, `INSERT INTO usage_calls (session_key, turn, call, at, model, provider, prompt_tokens, completion_tokens, cached_tokens, cache_write_tokens, estimated, kind)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
		ON CONFLICT (session_key, turn, call) DO UPDATE SET at = EXCLUDED.at, model = EXCLUDED.model, provider = EXCLUDED.provider,
			prompt_tokens = EXCLUDED.prompt_tokens, completion_tokens = EXCLUDED.completion_tokens, cached_tokens = EXCLUDED.cached_tokens,
			cache_write_tokens = EXCLUDED.cache_write_tokens,
			estimated = EXCLUDED.estimated, kind = EXCLUDED.kind`,
		r.Session, r.Turn, r.Call, r.Time, r.Model, r.Provider, r.Prompt, r.Completion, r.Cached, r.CacheWrite, r.Estimated, string(r.Kind))
	if err != nil {
		return fmt.Errorf("record usage of %s/%s: %w", r.Session, r.Call, err)
	}
	return nil
}

// Since returns the calls at or after t (zero: all), in the order first recorded.
func (u *Usage) Since(t time.Time) ([]usage.Record, int, error) {
	ctx, cancel := bounded()
	defer cancel()
	rows, err := u.db.pool.Query(ctx, `SELECT session_key, turn, call, at, model, provider, prompt_tokens, completion_tokens, cached_tokens, cache_write_tokens, estimated, kind
		FROM usage_calls WHERE at >= $1 ORDER BY id`, t)
	if err != nil {
		return nil, 0, fmt.Errorf("read usage from %s: %w", u.db.where, err)
	}
	recs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (usage.Record, error) {
		var r usage.Record
		var kind string
		err := row.Scan(&r.Session, &r.Turn, &r.Call, &r.Time, &r.Model, &r.Provider, &r.Prompt, &r.Completion, &r.Cached, &r.CacheWrite, &r.Estimated, &kind)
		r.Kind = usage.Kind(kind)
		return r, err
	})
	if err != nil {
		return nil, 0, fmt.Errorf("read usage from %s: %w", u.db.where, err)
	}
	return recs, 0, nil
}
