package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/nanobot-durable/nanobot/memory"
)

// Archive is memory.Archive on the database: memory_history by cursor and
// memory_state's one row for Dream's cursor, which also serializes appends.
type Archive struct{ db *DB }

var _ memory.Archive = (*Archive)(nil)

// Archive is the memory archive of the database.
func (db *DB) Archive() *Archive { return &Archive{db: db} }

const entryColumns = `cursor_no, stamp, content, session_key, entry_id`

func scanEntry(r pgx.Row) (memory.Entry, error) {
	var e memory.Entry
	return e, r.Scan(&e.Cursor, &e.Timestamp, &e.Content, &e.SessionKey, &e.ID)
}

// Append adds an entry with the next cursor, keeping the newest MaxHistoryEntries.
func (a *Archive) Append(ctx context.Context, e memory.Entry) (memory.Entry, error) {
	var out memory.Entry
	err := a.db.inTx(ctx, func(tx pgx.Tx) error {
		var dream int
		if err := tx.QueryRow(ctx, `SELECT dream_cursor FROM memory_state FOR UPDATE`).Scan(&dream); err != nil {
			return err
		}
		if e.ID != "" {
			stored, err := scanEntry(tx.QueryRow(ctx, `SELECT `+entryColumns+` FROM memory_history WHERE entry_id = $1`, e.ID))
			if err == nil {
				out = stored
				return nil
			}
			if !errors.Is(err, pgx.ErrNoRows) {
				return err
			}
		}
		var last int
		if err := tx.QueryRow(ctx, `SELECT coalesce(max(cursor_no), 0) FROM memory_history`).Scan(&last); err != nil {
			return err
		}
		e = memory.Stamp(e)
		e.Cursor = last + 1
		if last == 0 {
			e.Cursor = dream + 1 // an emptied archive never reuses a cursor Dream saw
		}
		b := &pgx.Batch{}
		b.Queue(`INSERT INTO memory_history (`+entryColumns+`) VALUES ($1, $2, $3, $4, $5)`, e.Cursor, e.Timestamp, e.Content, e.SessionKey, e.ID)
		b.Queue(`DELETE FROM memory_history WHERE cursor_no <= (SELECT cursor_no FROM memory_history ORDER BY cursor_no DESC OFFSET $1 LIMIT 1)`, memory.MaxHistoryEntries)
		out = e
		return tx.SendBatch(ctx, b).Close()
	})
	if err != nil {
		return memory.Entry{}, fmt.Errorf("archive to history in %s: %w", a.db.where, err)
	}
	return out, nil
}

// Entries returns the archive, oldest first.
func (a *Archive) Entries(ctx context.Context) ([]memory.Entry, error) {
	rows, err := a.db.pool.Query(ctx, `SELECT `+entryColumns+` FROM memory_history ORDER BY cursor_no`)
	if err != nil {
		return nil, fmt.Errorf("read history from %s: %w", a.db.where, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (memory.Entry, error) { return scanEntry(r) })
	if err != nil {
		return nil, fmt.Errorf("read history from %s: %w", a.db.where, err)
	}
	return out, nil
}

// Find returns the entry with the given ID.
func (a *Archive) Find(ctx context.Context, id string) (memory.Entry, bool, error) {
	e, err := scanEntry(a.db.pool.QueryRow(ctx, `SELECT `+entryColumns+` FROM memory_history WHERE entry_id = $1 AND $1 <> ''`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return memory.Entry{}, false, nil
	}
	if err != nil {
		return memory.Entry{}, false, fmt.Errorf("find history entry %s in %s: %w", id, a.db.where, err)
	}
	return e, true, nil
}

// Cursor is Dream's cursor.
func (a *Archive) Cursor(ctx context.Context) (int, error) {
	var n int
	if err := a.db.pool.QueryRow(ctx, `SELECT dream_cursor FROM memory_state`).Scan(&n); err != nil {
		return 0, fmt.Errorf("read dream cursor from %s: %w", a.db.where, err)
	}
	return n, nil
}

// AdvanceCursor moves Dream's cursor from from to to in one compare-and-set.
func (a *Archive) AdvanceCursor(ctx context.Context, from, to int) (bool, error) {
	tag, err := a.db.pool.Exec(ctx, `UPDATE memory_state SET dream_cursor = $2 WHERE dream_cursor = $1 OR dream_cursor = $2`, from, to)
	if err != nil {
		return false, fmt.Errorf("move dream cursor in %s: %w", a.db.where, err)
	}
	return tag.RowsAffected() == 1, nil
}

// File is "": the archive is no file in the workspace.
func (a *Archive) File() string { return "" }
