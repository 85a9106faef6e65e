package devicestore

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"

	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/util/keys"
)

// Signal addresses are "<name>:<device>", the name a user's number with
// "_<agent>" appended for non-phone domains (LIDs are "<lid>_1").

// PutIdentity stores (or replaces) the identity key seen for address.
func (c *Container) PutIdentity(ctx context.Context, address string, key [32]byte) error {
	_, err := c.q(ctx).ExecContext(ctx, `INSERT INTO identities (their_id, identity) VALUES (?, ?)
		ON CONFLICT (their_id) DO UPDATE SET identity = excluded.identity`, address, key[:])
	if err != nil {
		return fmt.Errorf("put identity %s: %w", address, err)
	}
	return nil
}

// DeleteAllIdentities forgets the identity keys of every device of phone.
func (c *Container) DeleteAllIdentities(ctx context.Context, phone string) error {
	if err := c.deleteUser(ctx, "identities", "their_id", phone); err != nil {
		return fmt.Errorf("delete identities of %s: %w", phone, err)
	}
	return nil
}

// DeleteIdentity forgets the identity key of one address.
func (c *Container) DeleteIdentity(ctx context.Context, address string) error {
	if _, err := c.q(ctx).ExecContext(ctx, `DELETE FROM identities WHERE their_id = ?`, address); err != nil {
		return fmt.Errorf("delete identity %s: %w", address, err)
	}
	return nil
}

// IsTrustedIdentity trusts on first use: an address never seen, or seen
// with this same key.
func (c *Container) IsTrustedIdentity(ctx context.Context, address string, key [32]byte) (bool, error) {
	var stored []byte
	err := c.q(ctx).QueryRowContext(ctx, `SELECT identity FROM identities WHERE their_id = ?`, address).Scan(&stored)
	if errors.Is(err, sql.ErrNoRows) {
		return true, nil
	} else if err != nil {
		return false, fmt.Errorf("check identity %s: %w", address, err)
	}
	return bytes.Equal(stored, key[:]), nil
}

// GetSession is the session with address, nil if there is none.
func (c *Container) GetSession(ctx context.Context, address string) ([]byte, error) {
	var session []byte
	err := c.q(ctx).QueryRowContext(ctx, `SELECT session FROM sessions WHERE address = ?`, address).Scan(&session)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("get session %s: %w", address, err)
	}
	return session, nil
}

// HasSession tells whether a session with address is stored.
func (c *Container) HasSession(ctx context.Context, address string) (bool, error) {
	var one int
	err := c.q(ctx).QueryRowContext(ctx, `SELECT 1 FROM sessions WHERE address = ?`, address).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("check session %s: %w", address, err)
	}
	return true, nil
}

// GetManySessions maps every asked address to its session, nil for those
// without one.
func (c *Container) GetManySessions(ctx context.Context, addresses []string) (map[string][]byte, error) {
	out := make(map[string][]byte, len(addresses))
	err := c.inTx(ctx, "get sessions", func(ctx context.Context) error {
		for _, addr := range addresses {
			session, err := c.GetSession(ctx, addr)
			if err != nil {
				return err
			}
			out[addr] = session
		}
		return nil
	})
	return out, err
}

// PutSession stores (or replaces) the session with address.
func (c *Container) PutSession(ctx context.Context, address string, session []byte) error {
	_, err := c.q(ctx).ExecContext(ctx, `INSERT INTO sessions (address, session) VALUES (?, ?)
		ON CONFLICT (address) DO UPDATE SET session = excluded.session`, address, session)
	if err != nil {
		return fmt.Errorf("put session %s: %w", address, err)
	}
	return nil
}

// PutManySessions stores sessions in one transaction.
func (c *Container) PutManySessions(ctx context.Context, sessions map[string][]byte) error {
	return c.inTx(ctx, "put sessions", func(ctx context.Context) error {
		for addr, session := range sessions {
			if err := c.PutSession(ctx, addr, session); err != nil {
				return err
			}
		}
		return nil
	})
}

// DeleteAllSessions forgets the sessions with every device of phone.
func (c *Container) DeleteAllSessions(ctx context.Context, phone string) error {
	if err := c.deleteUser(ctx, "sessions", "address", phone); err != nil {
		return fmt.Errorf("delete sessions of %s: %w", phone, err)
	}
	return nil
}

// DeleteSession forgets the session with one address.
func (c *Container) DeleteSession(ctx context.Context, address string) error {
	if _, err := c.q(ctx).ExecContext(ctx, `DELETE FROM sessions WHERE address = ?`, address); err != nil {
		return fmt.Errorf("delete session %s: %w", address, err)
	}
	return nil
}

// deleteUser deletes the rows of table whose address column names user:
// "<user>:<device>" or "<user>_<agent>:<device>".
func (c *Container) deleteUser(ctx context.Context, table, column, user string) error {
	if user == "" {
		return errors.New("empty user")
	}
	return c.inTx(ctx, "delete "+table, func(ctx context.Context) error {
		for _, sep := range []string{":", "_"} {
			lo, hi := prefixBounds(user + sep)
			q := `DELETE FROM ` + table + ` WHERE ` + column + ` >= ? AND ` + column + ` < ?`
			if _, err := c.q(ctx).ExecContext(ctx, q, lo, hi); err != nil {
				return err
			}
		}
		return nil
	})
}

// MigratePNToLID moves the sessions, identities and sender keys kept
// under pn's address to lid's (an entry lid already has wins).
func (c *Container) MigratePNToLID(ctx context.Context, pn, lid types.JID) error {
	from, to := pn.SignalAddressUser()+":", lid.SignalAddressUser()+":"
	lo, hi := prefixBounds(from)
	return c.inTx(ctx, "migrate "+pn.String()+" to "+lid.String(), func(ctx context.Context) error {
		steps := []string{
			`INSERT OR IGNORE INTO sessions (address, session)
				SELECT ?3 || substr(address, length(?1) + 1), session FROM sessions WHERE address >= ?1 AND address < ?2`,
			`DELETE FROM sessions WHERE address >= ?1 AND address < ?2`,
			`INSERT OR IGNORE INTO identities (their_id, identity)
				SELECT ?3 || substr(their_id, length(?1) + 1), identity FROM identities WHERE their_id >= ?1 AND their_id < ?2`,
			`DELETE FROM identities WHERE their_id >= ?1 AND their_id < ?2`,
			`INSERT OR IGNORE INTO sender_keys (chat, sender, sender_key)
				SELECT chat, ?3 || substr(sender, length(?1) + 1), sender_key FROM sender_keys WHERE sender >= ?1 AND sender < ?2`,
			`DELETE FROM sender_keys WHERE sender >= ?1 AND sender < ?2`,
		}
		for _, step := range steps {
			if _, err := c.q(ctx).ExecContext(ctx, step, lo, hi, to); err != nil {
				return fmt.Errorf("migrate %s to %s: %w", pn, lid, err)
			}
		}
		return nil
	})
}

// maxPreKeyID: pre-key ids travel in three bytes.
const maxPreKeyID = 1<<24 - 1

// GetOrGenPreKeys returns count pre-keys not yet uploaded, the oldest
// first, generating (and storing) what is missing.
func (c *Container) GetOrGenPreKeys(ctx context.Context, count uint32) ([]*keys.PreKey, error) {
	var out []*keys.PreKey
	err := c.inTx(ctx, "get or generate pre-keys", func(ctx context.Context) error {
		rows, err := c.q(ctx).QueryContext(ctx, `SELECT id, private_key FROM prekeys WHERE uploaded = 0 ORDER BY id LIMIT ?`, count)
		if err != nil {
			return fmt.Errorf("list pre-keys: %w", err)
		}
		for rows.Next() {
			var id uint32
			var priv []byte
			if err := rows.Scan(&id, &priv); err != nil {
				_ = rows.Close()
				return fmt.Errorf("list pre-keys: %w", err)
			}
			key, err := preKey(id, priv)
			if err != nil {
				_ = rows.Close()
				return err
			}
			out = append(out, key)
		}
		if err := rows.Close(); err != nil {
			return fmt.Errorf("list pre-keys: %w", err)
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("list pre-keys: %w", err)
		}
		for uint32(len(out)) < count {
			key, err := c.newPreKey(ctx, false)
			if err != nil {
				return err
			}
			out = append(out, key)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// GenOnePreKey makes one pre-key handed out directly (in a retry
// receipt), so it counts as uploaded.
func (c *Container) GenOnePreKey(ctx context.Context) (*keys.PreKey, error) {
	var key *keys.PreKey
	err := c.inTx(ctx, "generate a pre-key", func(ctx context.Context) (err error) {
		key, err = c.newPreKey(ctx, true)
		return err
	})
	return key, err
}

// newPreKey stores a fresh pre-key under the next id; ids are never
// reused, even after their key is removed.
func (c *Container) newPreKey(ctx context.Context, uploaded bool) (*keys.PreKey, error) {
	var id uint32
	err := c.q(ctx).QueryRowContext(ctx, `INSERT INTO counters (name, value) VALUES ('prekey_id', 1)
		ON CONFLICT (name) DO UPDATE SET value = value + 1 RETURNING value`).Scan(&id)
	if err != nil {
		return nil, fmt.Errorf("next pre-key id: %w", err)
	}
	if id > maxPreKeyID {
		return nil, fmt.Errorf("pre-key ids exhausted (%d)", id)
	}
	key := keys.NewPreKey(id)
	_, err = c.q(ctx).ExecContext(ctx, `INSERT INTO prekeys (id, private_key, uploaded) VALUES (?, ?, ?)`,
		id, key.Priv[:], uploaded)
	if err != nil {
		return nil, fmt.Errorf("store pre-key %d: %w", id, err)
	}
	return key, nil
}

func preKey(id uint32, priv []byte) (*keys.PreKey, error) {
	pair, err := keyPair(priv)
	if err != nil {
		return nil, fmt.Errorf("pre-key %d: %w", id, err)
	}
	return &keys.PreKey{KeyPair: *pair, KeyID: id}, nil
}

// GetPreKey is pre-key id, nil if there is none.
func (c *Container) GetPreKey(ctx context.Context, id uint32) (*keys.PreKey, error) {
	var priv []byte
	err := c.q(ctx).QueryRowContext(ctx, `SELECT private_key FROM prekeys WHERE id = ?`, id).Scan(&priv)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("get pre-key %d: %w", id, err)
	}
	return preKey(id, priv)
}

// RemovePreKey forgets a used pre-key.
func (c *Container) RemovePreKey(ctx context.Context, id uint32) error {
	if _, err := c.q(ctx).ExecContext(ctx, `DELETE FROM prekeys WHERE id = ?`, id); err != nil {
		return fmt.Errorf("remove pre-key %d: %w", id, err)
	}
	return nil
}

// MarkPreKeysAsUploaded marks every pre-key up to upToID as on the server.
func (c *Container) MarkPreKeysAsUploaded(ctx context.Context, upToID uint32) error {
	if _, err := c.q(ctx).ExecContext(ctx, `UPDATE prekeys SET uploaded = 1 WHERE id <= ?`, upToID); err != nil {
		return fmt.Errorf("mark pre-keys up to %d uploaded: %w", upToID, err)
	}
	return nil
}

// UploadedPreKeyCount counts the stored pre-keys that are on the server.
func (c *Container) UploadedPreKeyCount(ctx context.Context) (int, error) {
	var n int
	if err := c.q(ctx).QueryRowContext(ctx, `SELECT count(*) FROM prekeys WHERE uploaded = 1`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count uploaded pre-keys: %w", err)
	}
	return n, nil
}

// PutSenderKey stores (or replaces) user's sender key in group.
func (c *Container) PutSenderKey(ctx context.Context, group, user string, session []byte) error {
	_, err := c.q(ctx).ExecContext(ctx, `INSERT INTO sender_keys (chat, sender, sender_key) VALUES (?, ?, ?)
		ON CONFLICT (chat, sender) DO UPDATE SET sender_key = excluded.sender_key`, group, user, session)
	if err != nil {
		return fmt.Errorf("put sender key of %s in %s: %w", user, group, err)
	}
	return nil
}

// GetSenderKey is user's sender key in group, nil if there is none.
func (c *Container) GetSenderKey(ctx context.Context, group, user string) ([]byte, error) {
	var key []byte
	err := c.q(ctx).QueryRowContext(ctx, `SELECT sender_key FROM sender_keys WHERE chat = ? AND sender = ?`, group, user).Scan(&key)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("get sender key of %s in %s: %w", user, group, err)
	}
	return key, nil
}
