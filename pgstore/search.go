package pgstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/session"
)

var _ session.Searcher = (*Sessions)(nil)

// searchSessions finds the matching messages with the trigram index of
// migration 0005 (its own expression, LIKE), newest sessions first; the
// command rows are dropped after, they are few.
const searchSessions = `SELECT s.key, s.modified_at, s.metadata, m.seq, m.body
	FROM session_messages m JOIN sessions s ON s.key = m.session_key
	WHERE s.kind = '' AND s.key <> $2
	  AND (CASE WHEN strpos(m.body::text, '\u0000') = 0 THEN m.body->>'role' IN ('user', 'assistant') ELSE false END)
	  AND (CASE WHEN strpos(m.body::text, '\u0000') = 0 THEN lower(m.body->>'content') END) LIKE $1 ESCAPE '\'
	ORDER BY s.modified_at DESC, s.key, m.seq`

// Search finds the chat sessions whose visible messages hold query.
func (s *Sessions) Search(query, exclude string, limit int) ([]session.Match, error) {
	ctx, cancel := bounded()
	defer cancel()
	needle := strings.ToLower(query)
	rows, err := s.db.pool.Query(ctx, searchSessions, "%"+likeEscape(needle)+"%", exclude)
	if err != nil {
		return nil, fmt.Errorf("search sessions in %s: %w", s.db.where, err)
	}
	defer rows.Close()
	var out []session.Match
	for rows.Next() {
		var key string
		var modified time.Time
		var meta, body []byte
		var seq int
		if err := rows.Scan(&key, &modified, &meta, &seq, &body); err != nil {
			return nil, fmt.Errorf("search sessions in %s: %w", s.db.where, err)
		}
		var m chat.Message
		// A multimodal row matched on its JSON; only its text counts.
		if json.Unmarshal(body, &m) != nil || m.Command || !strings.Contains(strings.ToLower(m.Content), needle) {
			continue
		}
		if n := len(out); n == 0 || out[n-1].Key != key {
			if n == limit {
				break
			}
			var md map[string]any
			_ = json.Unmarshal(meta, &md)
			out = append(out, session.Match{Key: key, Modified: modified, Title: s.title(ctx, key, md)})
		}
		last := &out[len(out)-1]
		last.Messages = append(last.Messages, session.Visible{Index: seq, Role: m.Role, Timestamp: m.Timestamp, Content: strings.TrimSpace(m.Content)})
		if len(last.Messages) > session.MatchMessages {
			last.Messages = last.Messages[1:]
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search sessions in %s: %w", s.db.where, err)
	}
	return out, nil
}

// firstUserMessage is the row a session without a stored title is named by.
const firstUserMessage = `SELECT body FROM session_messages
	WHERE session_key = $1 AND body->>'role' = 'user' AND coalesce((body->>'_command')::boolean, false) = false
	ORDER BY seq LIMIT 1`

func (s *Sessions) title(ctx context.Context, key string, md map[string]any) string {
	var first []session.Visible
	var body []byte
	if err := s.db.pool.QueryRow(ctx, firstUserMessage, key).Scan(&body); err == nil {
		var m chat.Message
		if json.Unmarshal(body, &m) == nil {
			first = session.VisibleMessages([]chat.Message{m})
		}
	}
	return session.Title(md, first)
}

// HandleSources are the chat sessions with their creation time and stored handle.
func (s *Sessions) HandleSources() ([]session.HandleSource, error) {
	ctx, cancel := bounded()
	defer cancel()
	rows, err := s.db.pool.Query(ctx, `SELECT key, created_at, coalesce(metadata->>'`+session.HandleKey+`', '') FROM sessions WHERE kind = ''`)
	if err != nil {
		return nil, fmt.Errorf("list sessions in %s: %w", s.db.where, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (session.HandleSource, error) {
		var h session.HandleSource
		return h, r.Scan(&h.Key, &h.CreatedAt, &h.Stored)
	})
	if err != nil {
		return nil, fmt.Errorf("list sessions in %s: %w", s.db.where, err)
	}
	return out, nil
}

// likeEscape makes s match itself in a LIKE pattern.
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}
