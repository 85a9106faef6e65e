package pgstore

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/nanobot-durable/nanobot/owner"
)

// OwnerKey is owner.Store on the database: one key per instance, the first
// proposed wins, so stateless workers of another home verify the same proofs.
type OwnerKey struct {
	db       *DB
	instance string
}

var _ owner.Store = (*OwnerKey)(nil)

// OwnerKey is the owner key store of an instance.
func (db *DB) OwnerKey(instance string) *OwnerKey { return &OwnerKey{db: db, instance: instance} }

// Adopt inserts proposed unless the instance has a key, and returns the one stored.
func (s *OwnerKey) Adopt(ctx context.Context, proposed owner.Key) (owner.Key, error) {
	if proposed.Valid() {
		raw, _ := hex.DecodeString(proposed.Hex())
		_, err := s.db.pool.Exec(ctx, `INSERT INTO owner_keys (instance, key) VALUES ($1, $2) ON CONFLICT DO NOTHING`, s.instance, raw)
		if err != nil {
			return owner.Key{}, fmt.Errorf("store the owner key of %s: %w", s.instance, err)
		}
	}
	var raw []byte
	err := s.db.pool.QueryRow(ctx, `SELECT key FROM owner_keys WHERE instance = $1`, s.instance).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return owner.Key{}, fmt.Errorf("instance %s: %w", s.instance, owner.ErrNotStored)
	}
	if err != nil {
		return owner.Key{}, fmt.Errorf("read the owner key of %s: %w", s.instance, err)
	}
	return owner.ParseKey(hex.EncodeToString(raw))
}
