package signal

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/channeltest"
	"github.com/nanobot-durable/nanobot/channels/signal/signalpeer"
	"github.com/nanobot-durable/nanobot/internal/testenv"
)

// harness is the channel connected to a signalpeer, publishing into a
// list where the manager would be.
type harness struct {
	peer      *signalpeer.Peer
	ch        *Channel
	logs      *testenv.SyncBuffer
	workspace string
	*channeltest.Publisher
}

// block is channels.signal over the peer, DMs and the peer's group on.
func block(peer *signalpeer.Peer, extra map[string]any) string {
	b := map[string]any{"enabled": true, "phoneNumber": signalpeer.Account,
		"daemonHost": peer.Host(), "daemonPort": peer.Port(), "attachmentsDir": peer.AttachmentsDir(),
		"dm":    map[string]any{"enabled": true, "policy": "allowlist", "allowFrom": []string{signalpeer.Alice.Number}},
		"group": map[string]any{"enabled": true, "policy": "allowlist", "allowFrom": []string{signalpeer.GroupID}, "requireMention": true}}
	for k, v := range extra {
		b[k] = v
	}
	raw, _ := json.Marshal(b)
	return string(raw)
}

// start connects a channel to peer; publish nil: the harness's Publisher.
func start(t *testing.T, peer *signalpeer.Peer, extra map[string]any, publish channels.Publish) *harness {
	t.Helper()
	return startIn(t, t.TempDir(), peer, extra, publish)
}

// startIn is start with the channel's state kept in home.
func startIn(t *testing.T, home string, peer *signalpeer.Peer, extra map[string]any, publish channels.Publish) *harness {
	t.Helper()
	logs := &testenv.SyncBuffer{}
	deps := channels.Deps{Config: channeltest.ConfigWith(t, Name, block(peer, extra)), Workspace: t.TempDir(), Home: home,
		Log: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	ch, err := New(deps)
	require.NoError(t, err)
	h := &harness{peer: peer, ch: ch, logs: logs, workspace: deps.Workspace, Publisher: channeltest.NewPublisher(t)}
	if publish == nil {
		publish = h.Publish
	}
	ctx, cancel := context.WithCancel(context.Background())
	require.NoError(t, ch.Start(ctx, publish))
	t.Cleanup(func() {
		h.stop(t)
		cancel()
		if t.Failed() {
			t.Logf("channel log:\n%s", logs.String())
		}
	})
	require.Eventually(t, func() bool { return ch.Connected() && peer.Connected() }, 10*time.Second, 10*time.Millisecond, "never connected")
	return h
}

func (h *harness) stop(t *testing.T) {
	stopCtx, done := context.WithTimeout(context.Background(), 10*time.Second)
	defer done()
	require.NoError(t, h.ch.Stop(stopCtx))
}
