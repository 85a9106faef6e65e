package pgstore

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/nanobot-durable/nanobot/channels"
)

// ChannelState is channels.StateStore on the database: one channel's values
// of one instance, read and written by every gateway on it, so one that
// restarts with a fresh home, or runs beside another, goes on from what the
// other stored. The last writer wins.
type ChannelState struct {
	db       *DB
	instance string
	channel  string
}

var _ channels.StateStore = (*ChannelState)(nil)

// ChannelState is the state of channel for instance.
func (db *DB) ChannelState(instance, channel string) *ChannelState {
	return &ChannelState{db: db, instance: instance, channel: channel}
}

// Get is key's value ("" when none was put).
func (s *ChannelState) Get(key string) (string, error) {
	ctx, cancel := bounded()
	defer cancel()
	var v string
	err := s.db.pool.QueryRow(ctx, `SELECT value FROM channel_state WHERE instance = $1 AND channel = $2 AND key = $3`,
		s.instance, s.channel, key).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read %s state %q from %s: %w", s.channel, key, s.db.where, err)
	}
	return v, nil
}

// Put sets key's value.
func (s *ChannelState) Put(key, value string) error {
	ctx, cancel := bounded()
	defer cancel()
	_, err := s.db.pool.Exec(ctx, `INSERT INTO channel_state (instance, channel, key, value) VALUES ($1, $2, $3, $4)
		ON CONFLICT (instance, channel, key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`,
		s.instance, s.channel, key, value)
	if err != nil {
		return fmt.Errorf("write %s state %q to %s: %w", s.channel, key, s.db.where, err)
	}
	return nil
}
