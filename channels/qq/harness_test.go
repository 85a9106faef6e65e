package qq

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/channeltest"
	"github.com/nanobot-durable/nanobot/channels/qq/qqpeer"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/secrets"
)

// Openids the tests talk in.
const (
	alice = "A1B2C3D4E5F60718293A4B5C6D7E8F90"
	bob   = "B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0"
	group = "C0FFEE00C0FFEE00C0FFEE00C0FFEE00"
)

// harness is the channel connected to a qqpeer, publishing into a list
// where the manager would be.
type harness struct {
	t         *testing.T
	peer      *qqpeer.Peer
	ch        *Channel
	logs      *testenv.SyncBuffer
	workspace string
	mask      *secrets.Set

	*channeltest.Publisher // stands where the manager is
}

// depsFor are a channel's deps: block over the peer's app and bases.
func depsFor(t *testing.T, peer *qqpeer.Peer, block map[string]any) channels.Deps {
	t.Helper()
	b := map[string]any{"enabled": true, "appId": qqpeer.AppID, "secret": qqpeer.Secret,
		"apiBase": peer.URL(), "authBase": peer.URL(), "allowFrom": []string{"*"}, "ackMessage": ""}
	for k, v := range block {
		b[k] = v
	}
	raw, err := json.Marshal(b)
	require.NoError(t, err)
	cfg := config.Default()
	cfg.Channels.Other = map[string]json.RawMessage{"qq": raw}
	return channels.Deps{Config: cfg, Workspace: t.TempDir(), Home: t.TempDir(), Secrets: &secrets.Set{}}
}

// startHarness connects a channel with block to a new peer.
func startHarness(t *testing.T, block map[string]any) *harness {
	t.Helper()
	return startOn(t, qqpeer.New(t), block)
}

func startOn(t *testing.T, peer *qqpeer.Peer, block map[string]any) *harness {
	t.Helper()
	deps := depsFor(t, peer, block)
	logs := &testenv.SyncBuffer{}
	deps.Log = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ch, err := New(deps)
	require.NoError(t, err)
	h := &harness{t: t, peer: peer, ch: ch, logs: logs, workspace: deps.Workspace, mask: deps.Secrets,
		Publisher: channeltest.NewPublisher(t)}
	ctx, cancel := context.WithCancel(context.Background())
	require.NoError(t, ch.Start(ctx, h.Publish))
	t.Cleanup(func() {
		stopCtx, done := context.WithTimeout(context.Background(), 10*time.Second)
		defer done()
		require.NoError(t, ch.Stop(stopCtx))
		cancel()
		if t.Failed() {
			t.Logf("channel log:\n%s", logs.String())
		}
	})
	require.Eventually(t, peer.Connected, 10*time.Second, 10*time.Millisecond, "the bot never identified")
	require.Eventually(t, ch.Connected, 10*time.Second, 10*time.Millisecond, "READY never made the channel connected")
	return h
}

// sync sends a C2C message and waits for it: messages are handled in
// order, so everything sent before was handled (taken or dropped) too.
func (h *harness) sync() protocol.Inbound {
	h.t.Helper()
	n := len(h.Published())
	id := h.peer.C2C(alice, "sync")
	got := h.WaitPublished(n + 1)
	require.Equal(h.t, "qq:"+id, got[len(got)-1].ID, "the sync message comes last")
	return got[len(got)-1]
}

// reply is a turn's answer to a message in a chat.
func reply(chat, replyTo, turn, text string) channels.Reply {
	return channels.Reply{ID: turn + "#a", Route: protocol.Route{Channel: Name, ChatID: chat, ReplyTo: replyTo},
		Turn: turn, Text: text, Kind: protocol.ReplyAnswer}
}
