package dingtalk

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/channeltest"
	"github.com/nanobot-durable/nanobot/channels/dingtalk/dingtalkpeer"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/secrets"
)

// The people and the group of the tests.
var (
	alice = dingtalkpeer.User{StaffID: "staff-alice", Nick: "Alice"}
	bob   = dingtalkpeer.User{StaffID: "staff-bob", Nick: "Bob"}
)

const team = "cidTEAM0001"

// harness is the channel connected to a dingtalkpeer, publishing into a
// list where the manager would be.
type harness struct {
	t         *testing.T
	peer      *dingtalkpeer.Peer
	ch        *Channel
	logs      *testenv.SyncBuffer
	workspace string
	home      string

	*channeltest.Publisher // stands where the manager is
}

// depsFor are a channel's deps: block over the peer's credentials and apiBase.
func depsFor(t *testing.T, peer *dingtalkpeer.Peer, block map[string]any) channels.Deps {
	t.Helper()
	b := map[string]any{"enabled": true, "clientId": dingtalkpeer.ClientID, "clientSecret": dingtalkpeer.ClientSecret,
		"apiBase": peer.URL(), "allowFrom": []string{"*"}}
	for k, v := range block {
		b[k] = v
	}
	raw, err := json.Marshal(b)
	require.NoError(t, err)
	cfg := config.Default()
	cfg.Channels.Other = map[string]json.RawMessage{"dingtalk": raw}
	return channels.Deps{Config: cfg, Workspace: t.TempDir(), Home: t.TempDir(),
		Log: slog.New(slog.NewTextHandler(&testenv.SyncBuffer{}, nil))}
}

// startHarness connects a channel with block to a new peer.
func startHarness(t *testing.T, block map[string]any) *harness {
	t.Helper()
	peer := dingtalkpeer.New(t)
	return startOn(t, peer, depsFor(t, peer, block))
}

func startOn(t *testing.T, peer *dingtalkpeer.Peer, deps channels.Deps) *harness {
	t.Helper()
	logs := &testenv.SyncBuffer{}
	set := secrets.FromConfig(nil, nil)
	deps.Secrets = set
	deps.Log = slog.New(secrets.Handler(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}), set))
	ch, err := New(deps)
	require.NoError(t, err)
	h := &harness{t: t, peer: peer, ch: ch, logs: logs, workspace: deps.Workspace, home: deps.Home,
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
	require.Eventually(t, func() bool { return peer.Connected() && ch.Connected() }, 10*time.Second, 10*time.Millisecond,
		"the stream never connected")
	return h
}

// sync sends a DM and waits for it: messages are handled in order, so
// everything pushed before was handled (taken or dropped) too.
func (h *harness) sync() protocol.Inbound {
	h.t.Helper()
	n := len(h.Published())
	id := h.peer.Say(dingtalkpeer.Incoming{From: alice, Text: "sync"})
	got := h.WaitPublished(n + 1)
	require.Equal(h.t, "dingtalk:"+id, got[len(got)-1].ID, "the sync message comes last")
	return got[len(got)-1]
}

// reply is a turn's answer on the route of an inbound message.
func reply(route protocol.Route, turn, text string) channels.Reply {
	return channels.Reply{ID: turn + "#a", Route: route, Turn: turn, Text: text, Kind: protocol.ReplyAnswer}
}
