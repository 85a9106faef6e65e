package wecom

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/channeltest"
	"github.com/nanobot-durable/nanobot/channels/wecom/wecompeer"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
)

// Ids the tests talk in.
const (
	alice = "alice"
	team  = "wrkSFfCgAAexample"
)

// harness is the channel connected to a wecompeer, publishing into a list
// where the manager would be.
type harness struct {
	t         *testing.T
	peer      *wecompeer.Peer
	ch        *Channel
	logs      *testenv.SyncBuffer
	workspace string

	*channeltest.Publisher // stands where the manager is
}

// depsFor are a channel's deps: block over the peer's credentials and wsUrl.
func depsFor(t *testing.T, peer *wecompeer.Peer, block map[string]any) (channels.Deps, *testenv.SyncBuffer) {
	t.Helper()
	b := map[string]any{"enabled": true, "botId": wecompeer.BotID, "secret": wecompeer.Secret,
		"wsUrl": peer.URL(), "allowFrom": []string{"*"}}
	for k, v := range block {
		b[k] = v
	}
	raw, err := json.Marshal(b)
	require.NoError(t, err)
	cfg := config.Default()
	cfg.Channels.Other = map[string]json.RawMessage{"wecom": raw}
	logs := &testenv.SyncBuffer{}
	return channels.Deps{Config: cfg, Workspace: t.TempDir(), Home: t.TempDir(),
		Log: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}, logs
}

// startHarness connects a channel with block to a new peer.
func startHarness(t *testing.T, block map[string]any) *harness {
	t.Helper()
	peer := wecompeer.New(t)
	deps, logs := depsFor(t, peer, block)
	ch, err := New(deps)
	require.NoError(t, err)
	ch.heartbeat, ch.backoff = time.Hour, 20*time.Millisecond
	h := &harness{t: t, peer: peer, ch: ch, logs: logs, workspace: deps.Workspace, Publisher: channeltest.NewPublisher(t)}
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
	h.waitUp()
	return h
}

// waitUp waits for the bot to be subscribed.
func (h *harness) waitUp() {
	h.t.Helper()
	require.Eventually(h.t, func() bool { return h.peer.Subscribed() && h.ch.Connected() }, 10*time.Second, 10*time.Millisecond,
		"the bot never subscribed")
}

// sync sends a DM and waits for it: callbacks are handled in order, so
// everything sent before was handled (taken or dropped) too.
func (h *harness) sync() protocol.Inbound {
	h.t.Helper()
	_, id := h.peer.Say(wecompeer.Message{From: alice, Text: "sync"})
	require.Eventually(h.t, func() bool {
		got := h.Published()
		return len(got) > 0 && got[len(got)-1].ID == "wecom:"+id
	}, 10*time.Second, 5*time.Millisecond, "the sync message never came last")
	got := h.Published()
	return got[len(got)-1]
}

// answer is a turn's answer to a message in a chat.
func answer(chat, replyTo, turn, text string) channels.Reply {
	return channels.Reply{ID: turn + "#a", Route: protocol.Route{Channel: Name, ChatID: chat, ReplyTo: replyTo},
		Turn: turn, Text: text, Kind: protocol.ReplyAnswer}
}
