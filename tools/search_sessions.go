package tools

import (
	"context"
	"encoding/json"
	"strings"
)

const searchSessionsDescription = "Search other persisted conversation sessions by title or recent visible message " +
	"text. Use this only when the user asks about a past conversation or when prior " +
	"discussion is needed to answer. Results contain bounded excerpts; use " +
	"read_session for more context. When citing a result, link its title to the exact " +
	"session_ref using Markdown. The current session is excluded."

const searchSessionsParameters = `{
  "type": "object",
  "properties": {
    "query": {"type": "string", "minLength": 1, "maxLength": 500,
      "description": "Text to find in persisted session titles or visible user and assistant messages."}
  },
  "required": ["query"]
}`

// Bounds of a search (nanobot's).
const (
	searchSessionsLimit = 5
	searchExcerptChars  = 360
)

// SearchSessionsTool is search_sessions: text across the store's chat sessions.
type SearchSessionsTool struct{ book SessionBook }

// NewSearchSessions builds search_sessions over the session book.
func NewSearchSessions(book SessionBook) SearchSessionsTool { return SearchSessionsTool{book: book} }

func (SearchSessionsTool) Name() string        { return "search_sessions" }
func (SearchSessionsTool) Description() string { return searchSessionsDescription }
func (SearchSessionsTool) Parameters() json.RawMessage {
	return json.RawMessage(searchSessionsParameters)
}
func (SearchSessionsTool) Flags() Flags { return Flags{ReadOnly: true} }

type sessionExcerpt struct {
	MessageIndex int    `json:"message_index"`
	Role         string `json:"role"`
	Content      string `json:"content"`
}

type sessionHit struct {
	SessionKey string           `json:"session_key"`
	SessionRef string           `json:"session_ref"`
	Title      string           `json:"title"`
	UpdatedAt  string           `json:"updated_at"`
	Excerpts   []sessionExcerpt `json:"excerpts"`
}

func (t SearchSessionsTool) Run(ctx context.Context, env Env, args map[string]any) Result {
	query := strings.TrimSpace(StringArg(args, "query"))
	if query == "" {
		return ErrorResult("Error: search query must not be empty")
	}
	matches, err := t.book.Search(ctx, query, env.SessionKey, searchSessionsLimit)
	if err != nil {
		return ErrorResult("Error: %v", err)
	}
	needle := strings.ToLower(query)
	hits := []sessionHit{}
	for _, m := range matches {
		hit := sessionHit{SessionKey: m.Key, SessionRef: sessionRef(m.Key), Title: m.Title,
			UpdatedAt: m.Modified.Format(isoSeconds), Excerpts: []sessionExcerpt{}}
		for _, v := range m.Messages {
			hit.Excerpts = append(hit.Excerpts, sessionExcerpt{MessageIndex: v.Index, Role: v.Role, Content: excerpt(v.Content, needle, searchExcerptChars)})
		}
		hits = append(hits, hit)
	}
	return jsonResult(map[string]any{"notice": untrustedNotice, "query": query, "results": hits})
}

// isoSeconds is how results give times (ISO 8601 with the zone).
const isoSeconds = "2006-01-02T15:04:05Z07:00"
