package pgstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/session"
)

// Sessions is session.Store (and session.Lister) on the database. Every
// writer of a session locks its row first (SELECT … FOR UPDATE), so appends
// and updates of one session are serialized across hosts as the JSONL
// store's flock serializes them across processes.
type Sessions struct{ db *DB }

var (
	_ session.Store  = (*Sessions)(nil)
	_ session.Lister = (*Sessions)(nil)
)

// Sessions is the session store of the database.
func (db *DB) Sessions() *Sessions { return &Sessions{db: db} }

// Path tells where a session lives, for people reading logs.
func (s *Sessions) Path(key string) string { return s.db.where + " session " + key }

const loadSession = `SELECT kind, created_at, updated_at, metadata, last_consolidated, xmin::text::bigint, modified_at,
	(SELECT coalesce(json_agg(m.body ORDER BY m.seq), '[]') FROM session_messages m WHERE m.session_key = s.key)
	FROM sessions s WHERE s.key = $1`

// sessionStamp is a session row's version: every write of a session updates its row (modified_at
// moves on appends too), which gives the row a new xmin, the id of the transaction that wrote it.
const sessionStamp = `SELECT xmin::text::bigint, modified_at FROM sessions WHERE key = $1`

// rowStamp is the version of a session's row a parse was read at.
type rowStamp struct{ xmin, modified int64 }

// Load reads a session in one statement (one snapshot); a missing session is empty. A session
// parsed before is checked against its row's version first: a turn loads its session several
// times, and the full read grows with the session.
func (s *Sessions) Load(ctx context.Context, key string) (*session.Session, error) {
	sess := &session.Session{Key: key, Metadata: map[string]any{}}
	if s.db.sessions.Has(key) {
		var st rowStamp
		var modified time.Time
		err := s.db.pool.QueryRow(ctx, sessionStamp, key).Scan(&st.xmin, &modified)
		if errors.Is(err, pgx.ErrNoRows) {
			s.db.sessions.Forget(key)
			return sess, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read session %s: %w", key, err)
		}
		st.modified = modified.UnixMicro()
		if c := s.db.sessions.Get(key, st); c != nil {
			return c, nil
		}
	}
	var meta, msgs []byte
	var st rowStamp
	var modified time.Time
	err := s.db.pool.QueryRow(ctx, loadSession, key).Scan(&sess.Kind, &sess.CreatedAt, &sess.UpdatedAt, &meta, &sess.LastConsolidated, &st.xmin, &modified, &msgs)
	if errors.Is(err, pgx.ErrNoRows) {
		return sess, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read session %s: %w", key, err)
	}
	if err := decodeMetadata(meta, sess); err != nil {
		return nil, err
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(msgs, &raws); err != nil {
		return nil, fmt.Errorf("read messages of session %s: %w", key, err)
	}
	for i, raw := range raws {
		s.addMessage(sess, i, raw)
	}
	clamp(sess)
	st.modified = modified.UnixMicro()
	s.db.sessions.Put(key, sess, st)
	return sess, nil
}

func decodeMetadata(meta []byte, sess *session.Session) error {
	if err := json.Unmarshal(meta, &sess.Metadata); err != nil {
		return fmt.Errorf("read metadata of session %s: %w", sess.Key, err)
	}
	if sess.Metadata == nil {
		sess.Metadata = map[string]any{}
	}
	return nil
}

// addMessage decodes one row; a row that is no message is skipped and reported.
func (s *Sessions) addMessage(sess *session.Session, row int, raw []byte) bool {
	m, err := session.DecodeMessage(raw)
	if err != nil {
		p := fmt.Sprintf("row %d: %v", row+1, err)
		sess.Problems = append(sess.Problems, p)
		s.db.log.Warn("skipped unreadable session row", "session", sess.Key, "database", s.db.where, "problem", p)
		return false
	}
	sess.Messages = append(sess.Messages, m)
	return true
}

func clamp(sess *session.Session) {
	if sess.LastConsolidated > len(sess.Messages) {
		sess.LastConsolidated = len(sess.Messages)
	}
}

// ensureAndLock makes the session's row exist and locks it for this
// transaction; created tells whether this transaction made it.
const (
	ensureSession = `INSERT INTO sessions (key, created_at, updated_at, modified_at) VALUES ($1, $2, $2, $2) ON CONFLICT (key) DO NOTHING`
	lockSession   = `SELECT kind, created_at, updated_at, metadata, last_consolidated FROM sessions WHERE key = $1 FOR UPDATE`
)

// Append journals messages idempotently by (Turn, EntryID): the unique
// index skips an entry already there, whichever host wrote it.
func (s *Sessions) Append(ctx context.Context, key string, msgs ...chat.Message) (int, error) {
	if len(msgs) == 0 {
		return 0, nil
	}
	written := 0
	err := s.db.inTx(ctx, func(tx pgx.Tx) error {
		now := time.Now()
		b := &pgx.Batch{}
		b.Queue(ensureSession, key, now)
		b.Queue(`SELECT 1 FROM sessions WHERE key = $1 FOR UPDATE`, key)
		b.Queue(`SELECT coalesce(max(seq) + 1, 0) FROM session_messages WHERE session_key = $1`, key)
		var next int
		if err := sendBatch(ctx, tx, b, nil, nil, []any{&next}); err != nil {
			return err
		}
		b = &pgx.Batch{}
		for i, m := range msgs {
			if m.Timestamp == "" {
				m.Timestamp = now.Format(session.TimeLayout)
			}
			body, err := session.EncodeMessage(m)
			if err != nil {
				return fmt.Errorf("encode message of session %s: %w", key, err)
			}
			b.Queue(`INSERT INTO session_messages (session_key, seq, turn, entry_id, body) VALUES ($1, $2, $3, $4, $5)
				ON CONFLICT (session_key, turn, entry_id) WHERE entry_id <> '' DO NOTHING`, key, next+i, m.Turn, m.EntryID, string(body))
		}
		// In the same round trip: when nothing was new, the rollback below undoes it.
		b.Queue(`UPDATE sessions SET modified_at = $2 WHERE key = $1`, key, now)
		res := tx.SendBatch(ctx, b)
		for range len(msgs) + 1 {
			tag, err := res.Exec()
			if err != nil {
				res.Close()
				return err
			}
			if !tag.Update() {
				written += int(tag.RowsAffected())
			}
		}
		if err := res.Close(); err != nil {
			return err
		}
		if written == 0 {
			return errNothing // nothing new: leave no trace, not even a new session row
		}
		return nil
	})
	if errors.Is(err, errNothing) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("append to session %s: %w", key, err)
	}
	return written, nil
}

// errNothing rolls back a transaction that had nothing to write.
var errNothing = errors.New("nothing to write")

// sendBatch runs a batch whose statements are execs, except those given
// scan targets in order (nil entries are execs).
func sendBatch(ctx context.Context, tx pgx.Tx, b *pgx.Batch, targets ...[]any) error {
	res := tx.SendBatch(ctx, b)
	for _, dest := range targets {
		if dest == nil {
			if _, err := res.Exec(); err != nil {
				res.Close()
				return err
			}
			continue
		}
		if err := res.QueryRow().Scan(dest...); err != nil {
			res.Close()
			return err
		}
	}
	return res.Close()
}

// storedRow is a message row as read under the lock: its seq and its bytes.
type storedRow struct {
	seq  int
	body []byte
}

// Update is an atomic read-modify-write of one session, under its row lock.
// Only what fn changed is written: the rows from the first changed message on.
func (s *Sessions) Update(ctx context.Context, key string, fn func(*session.Session) error) error {
	err := s.db.inTx(ctx, func(tx pgx.Tx) error {
		now := time.Now()
		tag, err := tx.Exec(ctx, ensureSession, key, now)
		if err != nil {
			return err
		}
		sess := &session.Session{Key: key}
		var meta []byte
		if err := tx.QueryRow(ctx, lockSession, key).Scan(&sess.Kind, &sess.CreatedAt, &sess.UpdatedAt, &meta, &sess.LastConsolidated); err != nil {
			return err
		}
		if tag.RowsAffected() == 1 { // new: as a missing file, no times yet
			sess.CreatedAt, sess.UpdatedAt = time.Time{}, time.Time{}
		}
		if err := decodeMetadata(meta, sess); err != nil {
			return err
		}
		stored, err := s.rowsOf(ctx, tx, sess)
		if err != nil {
			return err
		}
		problems := len(sess.Problems) > 0
		clamp(sess)
		if err := fn(sess); err != nil {
			return userError{err}
		}
		return s.save(ctx, tx, sess, stored, problems, now)
	})
	if ue, ok := asUserError(err); ok {
		return ue
	}
	if err != nil {
		return fmt.Errorf("update session %s: %w", key, err)
	}
	return nil
}

// userError carries fn's own error through the transaction unwrapped.
type userError struct{ err error }

func (e userError) Error() string { return e.err.Error() }

// asUserError returns fn's own error when err is one.
func asUserError(err error) (error, bool) {
	var ue userError
	if errors.As(err, &ue) {
		return ue.err, true
	}
	return nil, false
}

// rowsOf reads the locked session's messages; stored[i] is the row of
// Messages[i] unless a row did not decode (sess.Problems says so).
func (s *Sessions) rowsOf(ctx context.Context, tx pgx.Tx, sess *session.Session) ([]storedRow, error) {
	rows, err := tx.Query(ctx, `SELECT seq, body FROM session_messages WHERE session_key = $1 ORDER BY seq`, sess.Key)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var stored []storedRow
	i := 0
	for rows.Next() {
		var r storedRow
		if err := rows.Scan(&r.seq, &r.body); err != nil {
			return nil, err
		}
		if s.addMessage(sess, i, r.body) {
			stored = append(stored, r)
		}
		i++
	}
	return stored, rows.Err()
}

// save writes the session row, then replaces the message rows from the
// first one fn changed (none when it changed only metadata).
func (s *Sessions) save(ctx context.Context, tx pgx.Tx, sess *session.Session, stored []storedRow, problems bool, now time.Time) error {
	if sess.CreatedAt.IsZero() {
		sess.CreatedAt = now
	}
	sess.UpdatedAt = now
	if problems {
		stored = stored[:0:0] // rows no longer line up with Messages: rewrite them all
		if _, err := tx.Exec(ctx, `DELETE FROM session_messages WHERE session_key = $1`, sess.Key); err != nil {
			return err
		}
	}
	meta, err := encodeMetadata(sess)
	if err != nil {
		return err
	}
	bodies := make([][]byte, len(sess.Messages))
	for i, m := range sess.Messages {
		if bodies[i], err = session.EncodeMessage(m); err != nil {
			return fmt.Errorf("encode message %d: %w", i, err)
		}
	}
	keep := 0 // rows kept as they are: the unchanged prefix
	for keep < len(stored) && keep < len(bodies) && bytes.Equal(stored[keep].body, bodies[keep]) {
		keep++
	}
	b := &pgx.Batch{}
	b.Queue(`UPDATE sessions SET kind = $2, created_at = $3, updated_at = $4, modified_at = $4, metadata = $5, last_consolidated = $6 WHERE key = $1`,
		sess.Key, sess.Kind, sess.CreatedAt, now, meta, sess.LastConsolidated)
	next := 0
	if keep < len(stored) {
		b.Queue(`DELETE FROM session_messages WHERE session_key = $1 AND seq >= $2`, sess.Key, stored[keep].seq)
		next = stored[keep].seq
	} else if len(stored) > 0 {
		next = stored[len(stored)-1].seq + 1
	}
	for i := keep; i < len(bodies); i++ {
		m := sess.Messages[i]
		b.Queue(`INSERT INTO session_messages (session_key, seq, turn, entry_id, body) VALUES ($1, $2, $3, $4, $5)`,
			sess.Key, next+i-keep, m.Turn, m.EntryID, string(bodies[i]))
	}
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return err
	}
	sess.Problems = nil
	return nil
}

// Claim records that a side-effecting step is about to act; false when any
// host claimed it before.
func (s *Sessions) Claim(ctx context.Context, key, turn, entryID string) (bool, error) {
	var ok bool
	err := s.db.pool.QueryRow(ctx, `INSERT INTO session_claims (session_key, turn, entry_id) VALUES ($1, $2, $3)
		ON CONFLICT DO NOTHING RETURNING true`, key, turn, entryID).Scan(&ok)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("claim %s/%s of session %s: %w", turn, entryID, key, err)
	}
	return true, nil
}

// Sessions lists every session.
func (s *Sessions) Sessions() ([]session.Info, error) {
	return s.list(`SELECT key, modified_at FROM sessions`)
}

// SessionsOfKind lists the sessions of one kind.
func (s *Sessions) SessionsOfKind(kind string) ([]session.Info, error) {
	return s.list(`SELECT key, modified_at FROM sessions WHERE kind = $1`, kind)
}

func (s *Sessions) list(query string, args ...any) ([]session.Info, error) {
	ctx, cancel := bounded()
	defer cancel()
	rows, err := s.db.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list sessions in %s: %w", s.db.where, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (session.Info, error) {
		var i session.Info
		return i, r.Scan(&i.Key, &i.Modified)
	})
	if err != nil {
		return nil, fmt.Errorf("list sessions in %s: %w", s.db.where, err)
	}
	return out, nil
}

// Delete removes a session with its messages, claims and turn data.
func (s *Sessions) Delete(key string) error {
	ctx, cancel := bounded()
	defer cancel()
	err := s.db.inTx(ctx, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		b.Queue(`DELETE FROM sessions WHERE key = $1`, key)
		b.Queue(`DELETE FROM session_claims WHERE session_key = $1`, key)
		b.Queue(`DELETE FROM session_turn_data WHERE session_key = $1`, key)
		return tx.SendBatch(ctx, b).Close()
	})
	if err != nil {
		return fmt.Errorf("delete session %s: %w", key, err)
	}
	s.db.turnData.forget(key, nil)
	return nil
}
