package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/nanobot-durable/nanobot/pairing"
)

// pairingLock serializes pairing writers on every host (pg_advisory_xact_lock key).
const pairingLock = 0x70616972696e67 // "pairing"

// Pairing is pairing.Backend on the database. The state is a handful of
// rows, so an update rewrites it whole under one lock, as the file does.
type Pairing struct{ db *DB }

var _ pairing.Backend = (*Pairing)(nil)

// Pairing is the pairing store of the database.
func (db *DB) Pairing() *pairing.Store { return pairing.New(&Pairing{db: db}) }

type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// Read loads the state.
func (p *Pairing) Read(ctx context.Context) (*pairing.State, error) {
	st, err := readPairing(ctx, p.db.pool)
	if err != nil {
		return nil, fmt.Errorf("read pairing from %s: %w", p.db.where, err)
	}
	return st, nil
}

func readPairing(ctx context.Context, q querier) (*pairing.State, error) {
	var st pairing.State
	rows, err := q.Query(ctx, `SELECT code, channel, sender_id, chat_id, created_at, expires_at FROM pairing_pending ORDER BY position`)
	if err != nil {
		return nil, err
	}
	if st.Pending, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (pairing.Request, error) {
		var x pairing.Request
		return x, r.Scan(&x.Code, &x.Channel, &x.SenderID, &x.ChatID, &x.Created, &x.Expires)
	}); err != nil {
		return nil, err
	}
	rows, err = q.Query(ctx, `SELECT channel, sender_id, approved_at FROM pairing_approved ORDER BY position`)
	if err != nil {
		return nil, err
	}
	if st.Approved, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (pairing.Approved, error) {
		var x pairing.Approved
		return x, r.Scan(&x.Channel, &x.SenderID, &x.Approved)
	}); err != nil {
		return nil, err
	}
	return &st, nil
}

// Update runs fn on the state and writes what it leaves, under the pairing lock.
func (p *Pairing) Update(ctx context.Context, fn func(*pairing.State) error) error {
	err := p.db.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, pairingLock); err != nil {
			return err
		}
		st, err := readPairing(ctx, tx)
		if err != nil {
			return err
		}
		if err := fn(st); err != nil {
			return userError{err}
		}
		b := &pgx.Batch{}
		b.Queue(`DELETE FROM pairing_pending`)
		b.Queue(`DELETE FROM pairing_approved`)
		for i, r := range st.Pending {
			b.Queue(`INSERT INTO pairing_pending (code, position, channel, sender_id, chat_id, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
				r.Code, i, r.Channel, r.SenderID, r.ChatID, r.Created, r.Expires)
		}
		for i, a := range st.Approved {
			b.Queue(`INSERT INTO pairing_approved (position, channel, sender_id, approved_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`,
				i, a.Channel, a.SenderID, a.Approved)
		}
		return tx.SendBatch(ctx, b).Close()
	})
	if ue, ok := asUserError(err); ok {
		return ue
	}
	if err != nil {
		return fmt.Errorf("update pairing in %s: %w", p.db.where, err)
	}
	return nil
}
