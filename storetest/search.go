package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/session"
)

// searchFindsVisibleText: what the session tools see of a store. Only chat
// sessions, only what a person saw (no commands, no tool traffic), newest
// session first, the last two hits of each, the caller's own left out.
func searchFindsVisibleText(t *testing.T, open Open[session.Store]) {
	s, ctx := open(t), context.Background()
	searcher, ok := s.(session.Searcher)
	require.True(t, ok, "every backend searches its sessions")
	say := func(key string, msgs ...chat.Message) {
		t.Helper()
		_, err := s.Append(ctx, key, msgs...)
		require.NoError(t, err)
		time.Sleep(5 * time.Millisecond) // modification times apart
	}
	assistant := func(turn, id, text string) chat.Message {
		return chat.Message{Role: chat.RoleAssistant, Content: text, Turn: turn, EntryID: id}
	}
	say("telegram:old", user("t1", "user", "Plan the TRIP to Lisbon\nwith details"), assistant("t1", "final", "Lisbon in May."))
	say("slack:cmd", chat.Message{Role: chat.RoleUser, Content: "/status trip", Command: true, Turn: "t", EntryID: "user"},
		chat.Message{Role: chat.RoleTool, Content: "trip in a tool result", Name: "exec", Turn: "t", EntryID: "tool-1"})
	require.NoError(t, s.Update(ctx, "subagent:x", func(sess *session.Session) error {
		sess.Kind = "subagent"
		sess.Messages = append(sess.Messages, user("t", "user", "a trip for a subagent"))
		return nil
	}))
	say("cli:new", user("t1", "user", "trip one"), user("t2", "user", "trip two"), user("t3", "user", "100% trip_x"), assistant("t3", "final", "no"))
	say("cli:me", user("t1", "user", "my own trip"))

	got, err := searcher.Search("Trip", "cli:me", 5)
	require.NoError(t, err)
	require.Len(t, got, 2, "commands, tool results, subagents and the caller's own session are not searched: %+v", got)
	require.Equal(t, "cli:new", got[0].Key, "newest first")
	require.Equal(t, "trip one", got[0].Title, "a session without a title is named by its first user line")
	require.Len(t, got[0].Messages, session.MatchMessages)
	require.Equal(t, "trip two", got[0].Messages[0].Content)
	require.Equal(t, "100% trip_x", got[0].Messages[1].Content)
	require.Equal(t, "telegram:old", got[1].Key)
	require.Equal(t, "Plan the TRIP to Lisbon", got[1].Title)

	got, err = searcher.Search("Trip", "cli:me", 1)
	require.NoError(t, err)
	require.Len(t, got, 1, "limit bounds the sessions")

	got, err = searcher.Search("0% trip_", "", 5)
	require.NoError(t, err)
	require.Len(t, got, 1, "%% and _ are text, not wildcards")
	got, err = searcher.Search("0%_trip", "", 5)
	require.NoError(t, err)
	require.Empty(t, got)

	sources, err := searcher.HandleSources()
	require.NoError(t, err)
	keys := map[string]bool{}
	for _, src := range sources {
		keys[src.Key] = true
		require.False(t, src.CreatedAt.IsZero(), src.Key)
	}
	require.Equal(t, map[string]bool{"telegram:old": true, "slack:cmd": true, "cli:new": true, "cli:me": true}, keys, "chat sessions only")

	require.NoError(t, s.Update(ctx, "cli:new", func(sess *session.Session) error {
		sess.Metadata[session.HandleKey] = "bodira"
		return nil
	}))
	sources, err = searcher.HandleSources()
	require.NoError(t, err)
	for _, h := range session.Handles(sources) {
		if h.Key == "cli:new" {
			require.Equal(t, "bodira", h.Handle, "a stored handle (nanobot's) is kept")
		}
	}
}
