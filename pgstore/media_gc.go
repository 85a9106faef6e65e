package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// MediaRow is a shared media file as listed, without its bytes.
type MediaRow struct {
	Ref  string
	Size int64
}

// Older lists the instance's media rows shared before cutoff.
func (m *Media) Older(ctx context.Context, cutoff time.Time) ([]MediaRow, error) {
	return m.listRows(ctx, "list old media", `SELECT ref, size FROM media WHERE instance = $1 AND created_at < $2 ORDER BY ref`, m.instance, cutoff)
}

// listRows runs a query returning (ref, size) rows.
func (m *Media) listRows(ctx context.Context, what, query string, args ...any) ([]MediaRow, error) {
	rows, err := m.db.pool.Query(ctx, query, args...)
	if err == nil {
		var out []MediaRow
		if out, err = pgx.CollectRows(rows, pgx.RowToStructByPos[MediaRow]); err == nil {
			return out, nil
		}
	}
	return nil, fmt.Errorf("%s on %s: %w", what, m.db.where, err)
}

// Drop deletes the rows of refs still shared before cutoff (a ref shared
// anew meanwhile stays) and returns those it deleted.
func (m *Media) Drop(ctx context.Context, refs []string, cutoff time.Time) ([]MediaRow, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	return m.listRows(ctx, "delete old media", `DELETE FROM media WHERE instance = $1 AND ref = ANY($2) AND created_at < $3 RETURNING ref, size`,
		m.instance, refs, cutoff)
}

// TableBytes is the space each of tables takes on disk (with indexes and TOAST).
func (db *DB) TableBytes(ctx context.Context, tables ...string) (int64, error) {
	var n int64
	err := db.pool.QueryRow(ctx, `SELECT coalesce(sum(pg_total_relation_size(to_regclass(t))), 0)::bigint FROM unnest($1::text[]) AS t`, tables).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("table sizes on %s: %w", db.where, err)
	}
	return n, nil
}
