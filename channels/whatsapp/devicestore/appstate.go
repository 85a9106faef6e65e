package devicestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"go.mau.fi/whatsmeow/store"
)

// PutAppStateSyncKey stores (or replaces) an app-state sync key shared by
// the phone.
func (c *Container) PutAppStateSyncKey(ctx context.Context, id []byte, key store.AppStateSyncKey) error {
	_, err := c.q(ctx).ExecContext(ctx, `INSERT INTO app_state_sync_keys (key_id, key_data, fingerprint, timestamp)
		VALUES (?, ?, ?, ?) ON CONFLICT (key_id) DO UPDATE SET key_data = excluded.key_data,
			fingerprint = excluded.fingerprint, timestamp = excluded.timestamp`,
		id, nonNil(key.Data), nonNil(key.Fingerprint), key.Timestamp)
	if err != nil {
		return fmt.Errorf("put app-state sync key %X: %w", id, err)
	}
	return nil
}

// GetAppStateSyncKey is the sync key id, nil if there is none.
func (c *Container) GetAppStateSyncKey(ctx context.Context, id []byte) (*store.AppStateSyncKey, error) {
	var key store.AppStateSyncKey
	err := c.q(ctx).QueryRowContext(ctx, `SELECT key_data, fingerprint, timestamp FROM app_state_sync_keys WHERE key_id = ?`, id).
		Scan(&key.Data, &key.Fingerprint, &key.Timestamp)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("get app-state sync key %X: %w", id, err)
	}
	return &key, nil
}

// GetLatestAppStateSyncKeyID is the id of the newest sync key, nil if
// there is none.
func (c *Container) GetLatestAppStateSyncKeyID(ctx context.Context) ([]byte, error) {
	var id []byte
	err := c.q(ctx).QueryRowContext(ctx, `SELECT key_id FROM app_state_sync_keys ORDER BY timestamp DESC, key_id DESC LIMIT 1`).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("get latest app-state sync key: %w", err)
	}
	return id, nil
}

// PutAppStateVersion records how far the app-state collection name is
// synced, and its state hash there.
func (c *Container) PutAppStateVersion(ctx context.Context, name string, version uint64, hash [128]byte) error {
	_, err := c.q(ctx).ExecContext(ctx, `INSERT INTO app_state_version (name, version, hash) VALUES (?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET version = excluded.version, hash = excluded.hash`,
		name, int64(version), hash[:])
	if err != nil {
		return fmt.Errorf("put app-state version of %s: %w", name, err)
	}
	return nil
}

// GetAppStateVersion is name's synced version and hash; 0 and a zero hash
// when it was never synced.
func (c *Container) GetAppStateVersion(ctx context.Context, name string) (uint64, [128]byte, error) {
	var (
		version int64
		raw     []byte
		hash    [128]byte
	)
	err := c.q(ctx).QueryRowContext(ctx, `SELECT version, hash FROM app_state_version WHERE name = ?`, name).Scan(&version, &raw)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, hash, nil
	} else if err != nil {
		return 0, hash, fmt.Errorf("get app-state version of %s: %w", name, err)
	}
	if len(raw) != len(hash) {
		return 0, hash, fmt.Errorf("get app-state version of %s: hash is %d bytes, want %d", name, len(raw), len(hash))
	}
	copy(hash[:], raw)
	return uint64(version), hash, nil
}

// DeleteAppStateVersion forgets name's sync state and its MACs, so the
// next sync starts from a snapshot.
func (c *Container) DeleteAppStateVersion(ctx context.Context, name string) error {
	return c.inTx(ctx, "delete app-state version of "+name, func(ctx context.Context) error {
		for _, table := range []string{"app_state_version", "app_state_mutation_macs"} {
			if _, err := c.q(ctx).ExecContext(ctx, `DELETE FROM `+table+` WHERE name = ?`, name); err != nil {
				return fmt.Errorf("delete app-state version of %s: %s: %w", name, table, err)
			}
		}
		return nil
	})
}

// PutAppStateMutationMACs stores the MACs a patch of version added, in
// one transaction.
func (c *Container) PutAppStateMutationMACs(ctx context.Context, name string, version uint64, mutations []store.AppStateMutationMAC) error {
	return c.inTx(ctx, "put app-state MACs of "+name, func(ctx context.Context) error {
		for _, m := range mutations {
			_, err := c.q(ctx).ExecContext(ctx, `INSERT INTO app_state_mutation_macs (name, version, index_mac, value_mac)
				VALUES (?, ?, ?, ?) ON CONFLICT (name, version, index_mac) DO UPDATE SET value_mac = excluded.value_mac`,
				name, int64(version), nonNil(m.IndexMAC), nonNil(m.ValueMAC))
			if err != nil {
				return fmt.Errorf("put app-state MAC %X of %s v%d: %w", m.IndexMAC, name, version, err)
			}
		}
		return nil
	})
}

// DeleteAppStateMutationMACs forgets every version's MAC of the given
// indexes, in one transaction.
func (c *Container) DeleteAppStateMutationMACs(ctx context.Context, name string, indexMACs [][]byte) error {
	return c.inTx(ctx, "delete app-state MACs of "+name, func(ctx context.Context) error {
		for _, index := range indexMACs {
			_, err := c.q(ctx).ExecContext(ctx, `DELETE FROM app_state_mutation_macs WHERE name = ? AND index_mac = ?`, name, index)
			if err != nil {
				return fmt.Errorf("delete app-state MAC %X of %s: %w", index, name, err)
			}
		}
		return nil
	})
}

// GetAppStateMutationMAC is the value MAC of indexMAC at its newest
// version, nil if there is none.
func (c *Container) GetAppStateMutationMAC(ctx context.Context, name string, indexMAC []byte) ([]byte, error) {
	var value []byte
	err := c.q(ctx).QueryRowContext(ctx, `SELECT value_mac FROM app_state_mutation_macs
		WHERE name = ? AND index_mac = ? ORDER BY version DESC LIMIT 1`, name, indexMAC).Scan(&value)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("get app-state MAC %X of %s: %w", indexMAC, name, err)
	}
	return value, nil
}

// nonNil turns a nil slice into an empty one: database/sql sends nil as
// NULL, which the NOT NULL blob columns refuse.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}
