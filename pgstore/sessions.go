package pgstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

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

// loadSession reads a session in one statement (one snapshot). Given the version of the parse
// kept here ($2, $3), it leaves the messages out while the row is still at that version: a turn
// loads its session several times, and the full read grows with the session.
const loadSession = `SELECT kind, created_at, updated_at, metadata, last_consolidated, xmin::text::bigint, modified_at,
	CASE WHEN xmin::text::bigint = $2 AND modified_at = $3 THEN NULL ELSE
	(SELECT coalesce(json_agg(m.body ORDER BY m.seq), '[]') FROM session_messages m WHERE m.session_key = s.key) END
	FROM sessions s WHERE s.key = $1`

// rowStamp is the version of a session's row a parse was read at: every write of a session
// updates its row (modified_at moves on appends too), which gives the row a new xmin, the id of
// the transaction that wrote it.
type rowStamp struct{ xmin, modified int64 }

// noStamp matches no row: the full read.
var noStamp = rowStamp{xmin: -1}

// Load reads a session in one round trip; a missing session is empty.
func (s *Sessions) Load(ctx context.Context, key string) (*session.Session, error) {
	kept, ok := s.db.sessions.Stamp(key)
	if !ok {
		kept = noStamp
	}
	sess, err := s.load(ctx, key, kept)
	if err == nil && sess == nil { // the kept parse was replaced between the read and the lookup
		sess, err = s.load(ctx, key, noStamp)
	}
	return sess, err
}

// load reads key, its messages only when the row is not at kept; nil when it is and the parse
// kept here is no longer at kept.
func (s *Sessions) load(ctx context.Context, key string, kept rowStamp) (*session.Session, error) {
	sess := &session.Session{Key: key, Metadata: map[string]any{}}
	var meta, msgs []byte
	var st rowStamp
	var modified time.Time
	err := s.db.pool.QueryRow(ctx, loadSession, key, kept.xmin, time.UnixMicro(kept.modified)).
		Scan(&sess.Kind, &sess.CreatedAt, &sess.UpdatedAt, &meta, &sess.LastConsolidated, &st.xmin, &modified, &msgs)
	if errors.Is(err, pgx.ErrNoRows) {
		s.db.sessions.Forget(key)
		return sess, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read session %s: %w", key, err)
	}
	st.modified = modified.UnixMicro()
	if msgs == nil {
		return s.db.sessions.Get(key, st), nil
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

// A writer makes the session's row exist, then locks it for its transaction (reading its
// version), which serializes the writers of one session across hosts.
const (
	ensureSession = `INSERT INTO sessions (key, created_at, updated_at, modified_at) VALUES ($1, $2, $2, $2) ON CONFLICT (key) DO NOTHING`
	lockSession   = `SELECT kind, created_at, updated_at, metadata, last_consolidated, xmin::text::bigint, modified_at FROM sessions WHERE key = $1 FOR UPDATE`
	lockStamp     = `SELECT xmin::text::bigint, modified_at FROM sessions WHERE key = $1 FOR UPDATE`
)

// newRows is the message rows a statement adds after the session's last one: $1 the session,
// $2, $3, $4 the turns, entry IDs and bodies, in order.
const newRows = `SELECT $1, base.next + m.ord - 1, m.turn, m.entry_id, m.body::json
	FROM (SELECT coalesce(max(seq) + 1, 0) AS next FROM session_messages WHERE session_key = $1) base,
		unnest($2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS m(turn, entry_id, body, ord)`

// appendMessages adds the rows whose (turn, entry ID) is new and, when it added any, moves the
// session's version on; it returns how many it added and the new version (no row: none).
const appendMessages = `WITH added AS (
	INSERT INTO session_messages (session_key, seq, turn, entry_id, body) ` + newRows + `
	ON CONFLICT (session_key, turn, entry_id) WHERE entry_id <> '' DO NOTHING RETURNING 1)
	UPDATE sessions SET modified_at = $5 WHERE key = $1 AND EXISTS (SELECT 1 FROM added)
	RETURNING (SELECT count(*) FROM added), xmin::text::bigint, modified_at`

// rowArgs are the turns, entry IDs and bodies of msgs, newRows' $2, $3 and $4.
func rowArgs(msgs []chat.Message) (turns, ids, bodies []string, err error) {
	for i, m := range msgs {
		body, err := session.EncodeMessage(m)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("encode message %d: %w", i, err)
		}
		turns, ids, bodies = append(turns, m.Turn), append(ids, m.EntryID), append(bodies, string(body))
	}
	return turns, ids, bodies, nil
}

// Append journals messages idempotently by (Turn, EntryID): the unique index skips an entry
// already there, whichever host wrote it. One round trip, one transaction (a batch runs as one);
// nothing new leaves no trace (its messages' rows, hence its session row, were there).
func (s *Sessions) Append(ctx context.Context, key string, msgs ...chat.Message) (int, error) {
	if len(msgs) == 0 {
		return 0, nil
	}
	now := time.Now()
	stamped := make([]chat.Message, len(msgs))
	for i, m := range msgs {
		if m.Timestamp == "" {
			m.Timestamp = now.Format(session.TimeLayout)
		}
		stamped[i] = m
	}
	turns, ids, bodies, err := rowArgs(stamped)
	if err != nil {
		return 0, fmt.Errorf("append to session %s: %w", key, err)
	}
	b := &pgx.Batch{}
	b.Queue(ensureSession, key, now)
	b.Queue(lockStamp, key)
	b.Queue(appendMessages, key, turns, ids, bodies, now)
	res := s.db.pool.SendBatch(ctx, b)
	var before, after rowStamp
	var beforeAt, afterAt time.Time
	written := 0
	_, err = res.Exec()
	if err == nil {
		err = res.QueryRow().Scan(&before.xmin, &beforeAt)
	}
	if err == nil {
		if err = res.QueryRow().Scan(&written, &after.xmin, &afterAt); errors.Is(err, pgx.ErrNoRows) {
			err = nil
		}
	}
	if closeErr := res.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return 0, fmt.Errorf("append to session %s: %w", key, err)
	}
	before.modified, after.modified = beforeAt.UnixMicro(), afterAt.UnixMicro()
	if written == len(msgs) { // the parse kept here, if it was current, is current again with them
		if c := s.db.sessions.Get(key, before); c != nil {
			c.Messages = append(c.Messages, stamped...)
			s.db.sessions.Put(key, c, after)
		}
	}
	return written, nil
}

// Update is an atomic read-modify-write of one session, under its row lock, in two round trips
// when this process holds the session's current parse (three when it reads the rows). Only what
// fn changed is written: the rows from the first changed message on.
func (s *Sessions) Update(ctx context.Context, key string, fn func(*session.Session) error) error {
	conn, err := s.db.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("update session %s: %w", key, err)
	}
	defer conn.Release() // a connection left in a transaction is closed, not reused
	err = s.update(ctx, conn.Conn(), key, fn)
	if err != nil && conn.Conn().PgConn().TxStatus() != 'I' {
		rctx, cancel := context.WithTimeout(context.Background(), opTimeout)
		_, _ = conn.Exec(rctx, "ROLLBACK")
		cancel()
	}
	if ue, ok := asUserError(err); ok {
		return ue
	}
	if err != nil {
		return fmt.Errorf("update session %s: %w", key, err)
	}
	return nil
}

// update opens the transaction in the batch that locks the row, and commits in the one that writes.
func (s *Sessions) update(ctx context.Context, conn *pgx.Conn, key string, fn func(*session.Session) error) error {
	now := time.Now()
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue(ensureSession, key, now)
	b.Queue(lockSession, key)
	res := conn.SendBatch(ctx, b)
	sess := &session.Session{Key: key}
	var meta []byte
	var st rowStamp
	var modified time.Time
	_, err := res.Exec()
	var tag pgconn.CommandTag
	if err == nil {
		tag, err = res.Exec()
	}
	if err == nil {
		err = res.QueryRow().Scan(&sess.Kind, &sess.CreatedAt, &sess.UpdatedAt, &meta, &sess.LastConsolidated, &st.xmin, &modified)
	}
	if closeErr := res.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return err
	}
	st.modified = modified.UnixMicro()
	if tag.RowsAffected() == 1 { // new: as a missing file, no times yet
		sess.CreatedAt, sess.UpdatedAt = time.Time{}, time.Time{}
	}
	if err := decodeMetadata(meta, sess); err != nil {
		return err
	}
	var stored [][]byte // the rows' bodies, in order; they line up with the messages unless some did not decode
	if kept := s.db.sessions.Get(key, st); kept != nil {
		sess.Messages, sess.Problems = kept.Messages, kept.Problems
		for i, m := range kept.Messages {
			body, err := session.EncodeMessage(m)
			if err != nil {
				return fmt.Errorf("encode message %d: %w", i, err)
			}
			stored = append(stored, body)
		}
	} else if stored, err = s.rowsOf(ctx, conn, sess); err != nil {
		return err
	}
	problems := len(sess.Problems) > 0
	clamp(sess)
	if err := fn(sess); err != nil {
		return userError{err}
	}
	after, err := s.save(ctx, conn, sess, stored, problems, now)
	if err != nil {
		return err
	}
	s.db.sessions.Put(key, sess, after)
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

// rowsOf reads the locked session's messages and returns the bodies of those that decoded.
func (s *Sessions) rowsOf(ctx context.Context, q querier, sess *session.Session) ([][]byte, error) {
	rows, err := q.Query(ctx, `SELECT body FROM session_messages WHERE session_key = $1 ORDER BY seq`, sess.Key)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var stored [][]byte
	i := 0
	for rows.Next() {
		var body []byte
		if err := rows.Scan(&body); err != nil {
			return nil, err
		}
		if s.addMessage(sess, i, body) {
			stored = append(stored, body)
		}
		i++
	}
	return stored, rows.Err()
}

// save writes the session row, replaces the message rows from the first one fn changed (none
// when it changed only metadata) and commits, in one round trip; it returns the row's new version.
func (s *Sessions) save(ctx context.Context, conn *pgx.Conn, sess *session.Session, stored [][]byte, problems bool, now time.Time) (rowStamp, error) {
	if sess.CreatedAt.IsZero() {
		sess.CreatedAt = now
	}
	sess.UpdatedAt = now
	meta, err := encodeMetadata(sess)
	if err != nil {
		return rowStamp{}, err
	}
	turns, ids, bodies, err := rowArgs(sess.Messages)
	if err != nil {
		return rowStamp{}, err
	}
	keep := 0 // rows kept as they are: the unchanged prefix
	for !problems && keep < len(stored) && keep < len(bodies) && bytes.Equal(stored[keep], []byte(bodies[keep])) {
		keep++
	}
	b := &pgx.Batch{}
	b.Queue(`UPDATE sessions SET kind = $2, created_at = $3, updated_at = $4, modified_at = $4, metadata = $5, last_consolidated = $6 WHERE key = $1
		RETURNING xmin::text::bigint, modified_at`, sess.Key, sess.Kind, sess.CreatedAt, now, meta, sess.LastConsolidated)
	execs := 0
	switch {
	case problems: // rows no longer line up with Messages: rewrite them all
		b.Queue(`DELETE FROM session_messages WHERE session_key = $1`, sess.Key)
		execs++
	case keep < len(stored): // the rows are in seq order: drop from the keep-th on
		b.Queue(`DELETE FROM session_messages WHERE session_key = $1 AND seq >= (
			SELECT seq FROM session_messages WHERE session_key = $1 ORDER BY seq OFFSET $2 LIMIT 1)`, sess.Key, keep)
		execs++
	}
	if keep < len(bodies) {
		b.Queue(`INSERT INTO session_messages (session_key, seq, turn, entry_id, body) `+newRows, sess.Key, turns[keep:], ids[keep:], bodies[keep:])
		execs++
	}
	b.Queue("COMMIT")
	execs++
	res := conn.SendBatch(ctx, b)
	var st rowStamp
	var modified time.Time
	err = res.QueryRow().Scan(&st.xmin, &modified)
	for ; err == nil && execs > 0; execs-- {
		_, err = res.Exec()
	}
	if closeErr := res.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return rowStamp{}, err
	}
	st.modified = modified.UnixMicro()
	sess.Problems = nil
	return st, nil
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
