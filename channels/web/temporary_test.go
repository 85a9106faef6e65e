package web

import (
	"context"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/protocol"
)

// TestTemporaryChat: a tmp- chat's message is a temporary turn in a session
// of its own; only /model and /stop go in; a discard deletes its session
// (and only a temporary chat's), behind the same guard as every route.
func TestTemporaryChat(t *testing.T) {
	c, p, base := startChannel(t, "s3cret")
	auth := []string{"Authorization", "Bearer s3cret"}
	a := call(t, http.MethodPost, base+"/api/send", `{"chat":"tmp-ab12","text":"a secret of mine"}`, auth...)
	require.Equal(t, http.StatusOK, a.status, a.body)
	msgs := p.all()
	require.Len(t, msgs, 1)
	require.Equal(t, protocol.TemporaryTurn, msgs[0].Kind)
	require.Equal(t, protocol.OwnChat(), msgs[0].Scope, "its own session under unifiedSession too")

	for _, refused := range []string{"/new", "/goal write a book", "/dream"} {
		a = call(t, http.MethodPost, base+"/api/send", `{"chat":"tmp-ab12","text":"`+refused+`"}`, auth...)
		require.Equal(t, http.StatusBadRequest, a.status, refused)
		require.Contains(t, a.body, "a temporary chat takes only /model and /stop")
	}
	require.Equal(t, http.StatusOK, call(t, http.MethodPost, base+"/api/send", `{"chat":"tmp-ab12","text":"/model"}`, auth...).status)
	require.Equal(t, http.StatusOK, call(t, http.MethodPost, base+"/api/send", `{"chat":"plain","text":"/new"}`, auth...).status, "other chats keep every command")
	require.Len(t, p.all(), 3)
	require.Empty(t, p.all()[2].Kind)

	key := protocol.SessionKey(Name, "tmp-ab12")
	_, err := c.store.Append(context.Background(), key, chat.Message{Role: chat.RoleUser, Content: "a secret of mine", Turn: "t1", EntryID: "user"})
	require.NoError(t, err)
	require.FileExists(t, c.store.Path(key))
	require.Equal(t, http.StatusUnauthorized, call(t, http.MethodPost, base+"/api/discard", `{"chat":"tmp-ab12"}`).status)
	require.Equal(t, http.StatusForbidden, call(t, http.MethodPost, base+"/api/discard", `{"chat":"tmp-ab12"}`, append(auth, "Origin", "http://evil.example")...).status)
	a = call(t, http.MethodPost, base+"/api/discard", `{"chat":"plain"}`, auth...)
	require.Equal(t, http.StatusBadRequest, a.status, "an ordinary chat is never discarded")
	a = call(t, http.MethodPost, base+"/api/discard", `{"chat":"tmp-ab12"}`, auth...)
	require.Equal(t, http.StatusAccepted, a.status, a.body)
	require.Eventually(t, func() bool {
		_, err := os.Stat(c.store.Path(key))
		return os.IsNotExist(err)
	}, 10*time.Second, 10*time.Millisecond, "the session is deleted")
}
