package web

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/internal/pgtest"
	"github.com/nanobot-durable/nanobot/pgstore"
)

// TestTheSidebarOnPostgreSQL: list, search, fork and archive read and write
// the journal on PostgreSQL as they do the files.
func TestTheSidebarOnPostgreSQL(t *testing.T) {
	db, err := pgstore.Open(context.Background(), pgtest.Database(t), nil)
	require.NoError(t, err)
	t.Cleanup(db.Close)
	c, _, base := startChannelOn(t, db.Sessions(), func(*config.Config) {})
	ctx := context.Background()
	_, err = c.store.Append(ctx, "telegram:7",
		chat.Message{Role: chat.RoleUser, Content: "where is the lighthouse?", Turn: "r1", EntryID: "u"},
		chat.Message{Role: chat.RoleAssistant, Content: "On the cape.", Turn: "r1", EntryID: "a"},
		chat.Message{Role: chat.RoleUser, Content: "and the harbour?", Turn: "r2", EntryID: "u"})
	require.NoError(t, err)
	_, err = c.store.Append(ctx, "web:w", chat.Message{Role: chat.RoleUser, Content: "hello", Turn: "r", EntryID: "u"})
	require.NoError(t, err)
	list := func(query string) []conversation { t.Helper(); return listed(t, base, query) }
	require.Len(t, list(""), 2)
	found := list("?q=LIGHTHOUSE")
	require.Len(t, found, 1)
	require.Equal(t, "telegram:7", found[0].Key)

	a := call(t, http.MethodPost, base+"/api/fork", `{"session":"telegram:7","index":1}`)
	require.Equal(t, http.StatusOK, a.status, a.body)
	var fork struct{ Session string }
	require.NoError(t, json.Unmarshal([]byte(a.body), &fork))
	s, err := c.store.Load(ctx, fork.Session)
	require.NoError(t, err)
	require.Len(t, s.Messages, 2)
	require.Equal(t, "On the cape.", s.Messages[1].Content)

	require.Equal(t, http.StatusOK, call(t, http.MethodPost, base+"/api/session", `{"session":"telegram:7","archived":true,"title":"Coast"}`).status)
	require.Len(t, list(""), 2, "the fork and the web chat")
	archived := list("?archived=1")
	require.Len(t, archived, 1)
	require.Equal(t, "Coast", archived[0].Title)
}
