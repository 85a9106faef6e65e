package devicestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"go.mau.fi/whatsmeow/store"
)

// bufferKeep is how long a handled event's hash is kept to recognise a
// redelivery of it.
const bufferKeep = 14 * 24 * time.Hour

// GetBufferedEvent is what was decrypted from the ciphertext with this
// hash; nil if it never was, a nil Plaintext once it was handled.
func (c *Container) GetBufferedEvent(ctx context.Context, ciphertextHash [32]byte) (*store.BufferedEvent, error) {
	var (
		evt                store.BufferedEvent
		server, insertedAt int64
	)
	err := c.q(ctx).QueryRowContext(ctx, `SELECT plaintext, server_time, insert_time FROM event_buffer WHERE ciphertext_hash = ?`,
		ciphertextHash[:]).Scan(&evt.Plaintext, &server, &insertedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("get buffered event %X: %w", ciphertextHash, err)
	}
	evt.ServerTime, evt.InsertTime = time.UnixMilli(server), time.UnixMilli(insertedAt)
	return &evt, nil
}

// PutBufferedEvent keeps a decrypted event until it is handled, so a
// crash in between does not lose it (its ratchet has moved on).
func (c *Container) PutBufferedEvent(ctx context.Context, ciphertextHash [32]byte, plaintext []byte, serverTimestamp time.Time) error {
	_, err := c.q(ctx).ExecContext(ctx, `INSERT INTO event_buffer (ciphertext_hash, plaintext, server_time, insert_time)
		VALUES (?, ?, ?, ?) ON CONFLICT (ciphertext_hash) DO UPDATE SET plaintext = excluded.plaintext,
			server_time = excluded.server_time, insert_time = excluded.insert_time`,
		ciphertextHash[:], nonNil(plaintext), serverTimestamp.UnixMilli(), time.Now().UnixMilli())
	if err != nil {
		return fmt.Errorf("put buffered event %X: %w", ciphertextHash, err)
	}
	return nil
}

// DoDecryptionTxn runs fn in one transaction, so a decryption's ratchet
// step and its buffered plaintext are saved together or not at all.
func (c *Container) DoDecryptionTxn(ctx context.Context, fn func(context.Context) error) error {
	return c.inTx(ctx, "decryption transaction", fn)
}

// ClearBufferedEventPlaintext drops a handled event's plaintext, keeping
// its hash to recognise a redelivery.
func (c *Container) ClearBufferedEventPlaintext(ctx context.Context, ciphertextHash [32]byte) error {
	_, err := c.q(ctx).ExecContext(ctx, `UPDATE event_buffer SET plaintext = NULL WHERE ciphertext_hash = ?`, ciphertextHash[:])
	if err != nil {
		return fmt.Errorf("clear buffered event %X: %w", ciphertextHash, err)
	}
	return nil
}

// DeleteOldBufferedHashes forgets handled events older than bufferKeep.
func (c *Container) DeleteOldBufferedHashes(ctx context.Context) error {
	cutoff := time.Now().Add(-bufferKeep).UnixMilli()
	_, err := c.q(ctx).ExecContext(ctx, `DELETE FROM event_buffer WHERE plaintext IS NULL AND insert_time < ?`, cutoff)
	if err != nil {
		return fmt.Errorf("delete old buffered events: %w", err)
	}
	return nil
}
