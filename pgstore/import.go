package pgstore

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/nanobot-durable/nanobot/memory"
	"github.com/nanobot-durable/nanobot/pairing"
	"github.com/nanobot-durable/nanobot/session"
	"github.com/nanobot-durable/nanobot/usage"
)

// The imports copy another store's data in, once: what the database
// already has is left as it is, so running one again changes nothing.

// Import copies a whole session (messages, claims, turn data) unless the
// database has a session of that key; it reports whether it copied.
func (s *Sessions) Import(ctx context.Context, sess *session.Session, modified time.Time, claims []session.Claim, blobs []session.TurnBlob) (bool, error) {
	copied := false
	err := s.db.inTx(ctx, func(tx pgx.Tx) error {
		created, updated := sess.CreatedAt, sess.UpdatedAt
		if created.IsZero() {
			created = modified
		}
		if updated.IsZero() {
			updated = modified
		}
		meta, err := encodeMetadata(sess)
		if err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `INSERT INTO sessions (key, kind, created_at, updated_at, modified_at, metadata, last_consolidated)
			VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (key) DO NOTHING`,
			sess.Key, sess.Kind, created, updated, modified, meta, sess.LastConsolidated)
		if err != nil || tag.RowsAffected() == 0 {
			return err // already there: left as it is
		}
		b := &pgx.Batch{}
		for i, m := range sess.Messages {
			body, err := session.EncodeMessage(m)
			if err != nil {
				return fmt.Errorf("encode message %d: %w", i, err)
			}
			// A file may repeat an entry (written before entries were unique): the first stays.
			b.Queue(`INSERT INTO session_messages (session_key, seq, turn, entry_id, body) VALUES ($1, $2, $3, $4, $5)
				ON CONFLICT (session_key, turn, entry_id) WHERE entry_id <> '' DO NOTHING`, sess.Key, i, m.Turn, m.EntryID, string(body))
		}
		for _, c := range claims {
			b.Queue(`INSERT INTO session_claims (session_key, turn, entry_id, claimed_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`,
				sess.Key, c.Turn, c.EntryID, orNow(c.At))
		}
		for _, d := range blobs {
			b.Queue(`INSERT INTO session_turn_data (session_key, turn, name, data, written_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`,
				sess.Key, d.Turn, d.Name, d.Data, orNow(d.Written))
		}
		copied = true
		return tx.SendBatch(ctx, b).Close()
	})
	if err != nil {
		return false, fmt.Errorf("import session %s: %w", sess.Key, err)
	}
	return copied, nil
}

func encodeMetadata(sess *session.Session) (string, error) {
	meta := sess.Metadata
	if meta == nil {
		meta = map[string]any{}
	}
	raw, err := json.Marshal(meta)
	if err != nil {
		return "", fmt.Errorf("encode metadata of session %s: %w", sess.Key, err)
	}
	return string(raw), nil
}

func orNow(t time.Time) time.Time {
	if t.IsZero() {
		return time.Now()
	}
	return t
}

// Import copies the calls the database does not have; it returns how many it copied.
func (u *Usage) Import(ctx context.Context, recs []usage.Record) (int, error) {
	added := 0
	err := u.db.inTx(ctx, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		for _, r := range recs {
			b.Queue(`INSERT INTO usage_calls (session_key, turn, call, at, model, provider, prompt_tokens, completion_tokens, cached_tokens, cache_write_tokens, estimated, kind)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) ON CONFLICT DO NOTHING`,
				r.Session, r.Turn, r.Call, r.Time, r.Model, r.Provider, r.Prompt, r.Completion, r.Cached, r.CacheWrite, r.Estimated, string(r.Kind))
		}
		res := tx.SendBatch(ctx, b)
		for range recs {
			tag, err := res.Exec()
			if err != nil {
				res.Close()
				return err
			}
			added += int(tag.RowsAffected())
		}
		return res.Close()
	})
	if err != nil {
		return 0, fmt.Errorf("import usage: %w", err)
	}
	return added, nil
}

// ImportPairing adds the pending codes and approved senders the database
// does not have; it returns how many of each it added.
func (db *DB) ImportPairing(ctx context.Context, from *pairing.State) (pending, approved int, err error) {
	err = (&Pairing{db: db}).Update(ctx, func(st *pairing.State) error {
		codes, senders := map[string]bool{}, map[string]bool{}
		for _, r := range st.Pending {
			codes[r.Code] = true
		}
		for _, a := range st.Approved {
			senders[a.Channel+"\x00"+a.SenderID] = true
		}
		for _, r := range from.Pending {
			if !codes[r.Code] && time.Now().Before(r.Expires) {
				st.Pending, codes[r.Code] = append(st.Pending, r), true
				pending++
			}
		}
		for _, a := range from.Approved {
			if k := a.Channel + "\x00" + a.SenderID; !senders[k] {
				st.Approved, senders[k] = append(st.Approved, a), true
				approved++
			}
		}
		return nil
	})
	return pending, approved, err
}

// Import copies the history and Dream's cursor when the database has no
// history yet; it reports whether it copied.
func (a *Archive) Import(ctx context.Context, entries []memory.Entry, cursor int) (bool, error) {
	copied := false
	err := a.db.inTx(ctx, func(tx pgx.Tx) error {
		var dream, have int
		if err := tx.QueryRow(ctx, `SELECT dream_cursor FROM memory_state FOR UPDATE`).Scan(&dream); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM memory_history`).Scan(&have); err != nil {
			return err
		}
		if have > 0 || dream > 0 {
			return nil // this database has its own history
		}
		b := &pgx.Batch{}
		for _, e := range entries {
			b.Queue(`INSERT INTO memory_history (`+entryColumns+`) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`,
				e.Cursor, e.Timestamp, e.Content, e.SessionKey, e.ID)
		}
		b.Queue(`UPDATE memory_state SET dream_cursor = $1`, cursor)
		copied = true
		return tx.SendBatch(ctx, b).Close()
	})
	if err != nil {
		return false, fmt.Errorf("import history: %w", err)
	}
	return copied, nil
}
