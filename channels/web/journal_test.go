package web

import (
	"context"
	"log/slog"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/session"
)

// TestThePageReadsTheGatewaysJournal: given the gateway's journal (a
// database on many hosts), the page lists and reloads from it, not from
// the home's files.
func TestThePageReadsTheGatewaysJournal(t *testing.T) {
	shared, err := session.NewJSONLStore(t.TempDir(), nil) // elsewhere than the home's sessions
	require.NoError(t, err)
	_, err = shared.Append(context.Background(), "web:shared", chat.Message{Role: chat.RoleUser, Content: "from the journal", Turn: "t", EntryID: "u"})
	require.NoError(t, err)
	cfg := config.Default()
	cfg.Path = filepath.Join(t.TempDir(), "config.json")
	editBlock(t, cfg, func(b *Config) { b.Port = 0 })
	c, err := New(channels.Deps{Config: cfg, Workspace: t.TempDir(), Log: slog.New(slog.DiscardHandler), Sessions: shared})
	require.NoError(t, err)
	require.NoError(t, c.Start(context.Background(), (&published{}).publish))
	t.Cleanup(func() { _ = c.Stop(context.Background()) })
	a := call(t, http.MethodGet, c.URL()+"api/sessions", "")
	require.Equal(t, http.StatusOK, a.status, a.body)
	require.Contains(t, a.body, "from the journal")
}
