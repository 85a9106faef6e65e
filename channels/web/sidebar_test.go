package web

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/config"
)

func TestSearchFindsSessionsOfEveryChannel(t *testing.T) {
	c, _, base := startChannel(t, "")
	ctx := context.Background()
	_, err := c.store.Append(ctx, "telegram:42", chat.Message{Role: chat.RoleUser, Content: "what about the Zebra crossing?", Turn: "t", EntryID: "u"})
	require.NoError(t, err)
	_, err = c.store.Append(ctx, "web:a", chat.Message{Role: chat.RoleUser, Content: "nothing striped", Turn: "t", EntryID: "u"})
	require.NoError(t, err)

	a := call(t, http.MethodGet, base+"/api/sessions?q=zebra", "")
	require.Equal(t, http.StatusOK, a.status, a.body)
	var list struct{ Sessions []conversation }
	require.NoError(t, json.Unmarshal([]byte(a.body), &list))
	require.Len(t, list.Sessions, 1)
	require.Equal(t, "telegram:42", list.Sessions[0].Key)
	require.Equal(t, "telegram", list.Sessions[0].Channel)
	require.Equal(t, "what about the Zebra crossing?", list.Sessions[0].Found)

	a = call(t, http.MethodGet, base+"/api/history?session=telegram:42", "")
	require.Equal(t, http.StatusOK, a.status, a.body)
	require.Contains(t, a.body, `"web":false`, "another channel's session is shown read-only")
	require.Contains(t, a.body, "Zebra crossing")
	require.Equal(t, http.StatusBadRequest, call(t, http.MethodGet, base+"/api/history?session=nocolon", "").status)
}

func TestForkCopiesTheJournalUpToAMessage(t *testing.T) {
	c, p, base := startChannel(t, "")
	ctx := context.Background()
	_, err := c.store.Append(ctx, "telegram:42",
		chat.Message{Role: chat.RoleUser, Content: "first", Turn: "r1", EntryID: "u"},
		chat.Message{Role: chat.RoleAssistant, Content: "answer one", Turn: "r1", EntryID: "a"},
		chat.Message{Role: chat.RoleUser, Content: "second", Turn: "r2", EntryID: "u"},
		chat.Message{Role: chat.RoleAssistant, Content: "answer two", Turn: "r2", EntryID: "a"})
	require.NoError(t, err)

	a := call(t, http.MethodPost, base+"/api/fork", `{"session":"telegram:42","index":1}`)
	require.Equal(t, http.StatusOK, a.status, a.body)
	var fork struct{ Session, Chat string }
	require.NoError(t, json.Unmarshal([]byte(a.body), &fork))
	require.Equal(t, "web:"+fork.Chat, fork.Session, "a fork is a web chat the page can go on with")
	s, err := c.store.Load(ctx, fork.Session)
	require.NoError(t, err)
	require.Len(t, s.Messages, 2)
	require.Equal(t, "answer one", s.Messages[1].Content)
	require.Equal(t, "telegram:42", s.Metadata[forkedFrom])
	orig, err := c.store.Load(ctx, "telegram:42")
	require.NoError(t, err)
	require.Len(t, orig.Messages, 4, "the original is untouched")
	require.Empty(t, p.all(), "forking starts no turn")

	for _, body := range []string{`{"session":"telegram:42","index":4}`, `{"session":"telegram:42","index":-1}`, `{"session":"bad","index":0}`, `not json`} {
		a := call(t, http.MethodPost, base+"/api/fork", body)
		require.Equal(t, http.StatusBadRequest, a.status, body)
	}
	require.Equal(t, http.StatusMethodNotAllowed, call(t, http.MethodGet, base+"/api/fork", "").status)
	require.Equal(t, http.StatusForbidden, call(t, http.MethodPost, base+"/api/fork", `{"session":"telegram:42","index":1}`, "Origin", "http://evil.example").status)
}

// TestTheConsoleEndpointsKeepTheGuard: a missing token and a foreign Host are
// refused on the sidebar, search, history of any channel and fork.
func TestTheConsoleEndpointsKeepTheGuard(t *testing.T) {
	c, _, base := startChannelWith(t, func(cfg *config.Config) { editBlock(t, cfg, func(b *Config) { b.Token = "s3cret" }) })
	_, err := c.store.Append(context.Background(), "telegram:42", chat.Message{Role: chat.RoleUser, Content: "secret plan", Turn: "r", EntryID: "u"})
	require.NoError(t, err)
	_, port, err := net.SplitHostPort(base[len("http://"):])
	require.NoError(t, err)
	requests := []struct{ method, path, body string }{
		{http.MethodGet, "/api/sessions?q=secret", ""},
		{http.MethodGet, "/api/history?session=telegram:42", ""},
		{http.MethodPost, "/api/fork", `{"session":"telegram:42","index":0}`},
		{http.MethodGet, "/api/turn?session=telegram:42&turn=" + runA, ""},
		{http.MethodPost, "/api/session", `{"session":"telegram:42","title":"renamed"}`},
	}
	for _, r := range requests {
		a := call(t, r.method, base+r.path, r.body)
		require.Equal(t, http.StatusUnauthorized, a.status, r.path)
		require.NotContains(t, a.body, "secret plan")
		a = call(t, r.method, base+r.path, r.body, "Authorization", "Bearer s3cret", "Host", "evil.example:"+port, "Origin", "http://evil.example:"+port)
		require.Equal(t, http.StatusMisdirectedRequest, a.status, r.path)
		require.NotContains(t, a.body, "secret plan")
		require.Equal(t, http.StatusOK, call(t, r.method, base+r.path, r.body, "Authorization", "Bearer s3cret").status, r.path)
	}
}

func TestRenameAndArchiveChangeOnlyTheMetadata(t *testing.T) {
	c, _, base := startChannel(t, "")
	ctx := context.Background()
	_, err := c.store.Append(ctx, "slack:C1", chat.Message{Role: chat.RoleUser, Content: "budget talk", Turn: "r", EntryID: "u"})
	require.NoError(t, err)
	list := func(query string) []conversation { t.Helper(); return listed(t, base, query) }

	require.Equal(t, http.StatusOK, call(t, http.MethodPost, base+"/api/session", `{"session":"slack:C1","title":"Budget 2027"}`).status)
	require.Equal(t, "Budget 2027", list("")[0].Title)
	require.Equal(t, http.StatusOK, call(t, http.MethodPost, base+"/api/session", `{"session":"slack:C1","archived":true}`).status)
	require.Empty(t, list(""), "an archived chat leaves the list")
	require.Equal(t, "slack:C1", list("?archived=1")[0].Key)
	require.Equal(t, "slack:C1", list("?q=budget")[0].Key, "a search still finds it")
	require.Equal(t, http.StatusOK, call(t, http.MethodPost, base+"/api/session", `{"session":"slack:C1","archived":false,"title":""}`).status)
	require.Equal(t, "budget talk", list("")[0].Title, "an empty name gives back the first line")
	s, err := c.store.Load(ctx, "slack:C1")
	require.NoError(t, err)
	require.Len(t, s.Messages, 1)

	require.Equal(t, http.StatusNotFound, call(t, http.MethodPost, base+"/api/session", `{"session":"web:none","title":"x"}`).status)
	require.Equal(t, http.StatusBadRequest, call(t, http.MethodPost, base+"/api/session", `{"session":"slack:C1"}`).status)
	require.Equal(t, http.StatusForbidden, call(t, http.MethodPost, base+"/api/session", `{"session":"slack:C1","title":"x"}`, "Origin", "http://evil.example").status)
}

// listed is what GET /api/sessions answers to query ("?q=…", "?archived=1" or "").
func listed(t *testing.T, base, query string) []conversation {
	t.Helper()
	a := call(t, http.MethodGet, base+"/api/sessions"+query, "")
	require.Equal(t, http.StatusOK, a.status, a.body)
	var l struct{ Sessions []conversation }
	require.NoError(t, json.Unmarshal([]byte(a.body), &l))
	return l.Sessions
}
