package tools

import (
	"context"
	"encoding/json"
)

const listSessionsDescription = "List other persisted sessions by @handle."

// ListSessionsTool is list_sessions: the handles of the other chat sessions.
type ListSessionsTool struct{ book SessionBook }

// NewListSessions builds list_sessions over the session book.
func NewListSessions(book SessionBook) ListSessionsTool { return ListSessionsTool{book: book} }

func (ListSessionsTool) Name() string        { return "list_sessions" }
func (ListSessionsTool) Description() string { return listSessionsDescription }
func (ListSessionsTool) Parameters() json.RawMessage {
	return json.RawMessage(`{"type": "object", "properties": {}}`)
}
func (ListSessionsTool) Flags() Flags { return Flags{ReadOnly: true} }

func (t ListSessionsTool) Run(ctx context.Context, env Env, _ map[string]any) Result {
	if env.SessionKey == "" {
		return ErrorResult("Error: session context is unavailable")
	}
	handles, err := t.book.Handles(ctx)
	if err != nil {
		return ErrorResult("Error: %v", err)
	}
	out := []string{}
	for _, h := range handles {
		if h.Key != env.SessionKey {
			out = append(out, "@"+h.Handle)
		}
	}
	return jsonResult(out)
}
