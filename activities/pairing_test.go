package activities

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/pairing"
	"github.com/nanobot-durable/nanobot/protocol"
)

func TestPairingCommand(t *testing.T) {
	a := newActivities(t, nil)
	cfg := config.Default()
	cfg.Path = filepath.Join(t.TempDir(), "config.json")
	require.NoError(t, cfg.SetChannelBlock("telegram", map[string]any{"allowFrom": []string{"owner"}}))
	a.Config = func() *config.Config { return cfg }
	store := pairing.NewStore(config.ConfigDir(cfg.Path))
	code, fresh, err := store.Request("telegram", "555|stranger", "555")
	require.NoError(t, err)
	require.True(t, fresh)
	ctx := context.Background()
	run := func(turn string, route protocol.Route, text string) string {
		in := step(turn, text)
		in.Message.Route = route
		res, err := a.set().Commands.Command(ctx, in)
		require.NoError(t, err)
		require.True(t, res.Handled)
		return res.Reply
	}
	owner := protocol.Route{Channel: "telegram", ChatID: "1", SenderID: "1|owner"}
	paired := protocol.Route{Channel: "telegram", ChatID: "2", SenderID: "2|friend"}

	require.Equal(t, "Only a user listed in allowFrom can manage pairing.", run("p1", paired, "/pairing approve "+code))
	require.Contains(t, run("p2", owner, "/pairing"), code+"  telegram:555|stranger (chat 555)")
	require.Equal(t, "Approved telegram:555|stranger (code "+code+"). Their next message reaches the agent.", run("p3", owner, "/pairing approve "+code))
	ok, err := store.IsApproved("telegram", "555|stranger")
	require.NoError(t, err)
	require.True(t, ok)
	require.Contains(t, run("p4", owner, "/pairing approve "+code), "Cannot approve")
	require.Equal(t, pairingUsage, run("p5", owner, "/pairing deny"))
	require.Equal(t, `Revoked 1 approved sender(s) matching "telegram:555|stranger".`, run("p6", protocol.Route{Channel: "cli", ChatID: "direct"}, "/pairing revoke telegram:555|stranger"))
	ok, err = store.IsApproved("telegram", "555")
	require.NoError(t, err)
	require.False(t, ok)
}
