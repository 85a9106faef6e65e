package feishu

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/channeltest"
	"github.com/nanobot-durable/nanobot/channels/feishu/feishupeer"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/secrets"
)

// The chats the tests talk in.
const group = "oc_group_0001"

var (
	alice = feishupeer.User{OpenID: "ou_alice_0001", UserID: "u_alice", Name: "Alice"}
	bob   = feishupeer.User{OpenID: "ou_bob_0002", UserID: "u_bob", Name: "Bob"}
)

// harness is the channel connected to a feishupeer, publishing into a
// list where the manager would be.
type harness struct {
	t         *testing.T
	peer      *feishupeer.Peer
	ch        *Channel
	logs      *testenv.SyncBuffer
	workspace string
	home      string

	*channeltest.Publisher // stands where the manager is
}

// depsFor are a channel's deps: block over the peer's app and apiBase.
func depsFor(t *testing.T, peer *feishupeer.Peer, block map[string]any) channels.Deps {
	t.Helper()
	b := map[string]any{"enabled": true, "appId": feishupeer.AppID, "appSecret": feishupeer.AppSecret,
		"apiBase": peer.URL(), "allowFrom": []string{"*"}}
	for k, v := range block {
		b[k] = v
	}
	raw, err := json.Marshal(b)
	require.NoError(t, err)
	cfg := config.Default()
	cfg.Channels.Other = map[string]json.RawMessage{"feishu": raw}
	return channels.Deps{Config: cfg, Workspace: t.TempDir(), Home: t.TempDir(), Secrets: &secrets.Set{},
		Log: slog.New(slog.NewTextHandler(&testenv.SyncBuffer{}, nil))}
}

func startHarness(t *testing.T, block map[string]any) *harness {
	t.Helper()
	return startOn(t, feishupeer.New(t), block)
}

func startOn(t *testing.T, peer *feishupeer.Peer, block map[string]any) *harness {
	t.Helper()
	deps := depsFor(t, peer, block)
	logs := &testenv.SyncBuffer{}
	deps.Log = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
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
	require.Eventually(t, peer.Connected, 10*time.Second, 10*time.Millisecond, "the bot never opened the long connection")
	return h
}

// sync sends a DM and waits for it: messages are handled in order, so
// everything sent before was handled (taken or dropped) too.
func (h *harness) sync() protocol.Inbound {
	h.t.Helper()
	id := h.peer.Say(feishupeer.Incoming{Sender: alice, Text: "sync"})
	require.Eventually(h.t, func() bool {
		got := h.Published()
		return len(got) > 0 && got[len(got)-1].ID == "feishu:"+id
	}, 10*time.Second, 10*time.Millisecond, "the sync message never came last")
	got := h.Published()
	return got[len(got)-1]
}

// reply is a turn's answer to a message in a chat.
func reply(chat, replyTo, turn, text string) channels.Reply {
	return channels.Reply{ID: turn + "#a", Route: protocol.Route{Channel: Name, ChatID: chat, ReplyTo: replyTo},
		Turn: turn, Text: text, Kind: protocol.ReplyAnswer}
}
