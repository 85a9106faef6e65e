package feishu

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/channeltest"
	"github.com/nanobot-durable/nanobot/channels/feishu/feishupeer"
	"github.com/nanobot-durable/nanobot/protocol"
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
	*channeltest.Run[*Channel]
	peer *feishupeer.Peer
}

// envFor is a channel's env: block over the peer's app and apiBase.
func envFor(t *testing.T, peer *feishupeer.Peer, block map[string]any) channeltest.Env {
	return channeltest.NewEnv(t, Name, channeltest.Merge(map[string]any{"enabled": true, "appId": feishupeer.AppID,
		"appSecret": feishupeer.AppSecret, "apiBase": peer.URL(), "allowFrom": []string{"*"}}, block))
}

// depsFor are the deps of envFor.
func depsFor(t *testing.T, peer *feishupeer.Peer, block map[string]any) channels.Deps {
	return envFor(t, peer, block).Deps
}

func startHarness(t *testing.T, block map[string]any) *harness {
	t.Helper()
	return startOn(t, feishupeer.New(t), block)
}

func startOn(t *testing.T, peer *feishupeer.Peer, block map[string]any) *harness {
	t.Helper()
	return restartOn(t, peer, envFor(t, peer, block))
}

// restartOn starts a channel on env (a restart: the same home) and peer.
func restartOn(t *testing.T, peer *feishupeer.Peer, env channeltest.Env) *harness {
	t.Helper()
	h := &harness{Run: channeltest.Start(t, env, New), peer: peer}
	require.Eventually(t, peer.Connected, 10*time.Second, 10*time.Millisecond, "the bot never opened the long connection")
	return h
}

// sync sends a DM and waits for it: messages are handled in order, so
// everything sent before was handled (taken or dropped) too.
func (h *harness) sync() protocol.Inbound {
	h.T.Helper()
	return h.WaitLast("feishu:" + h.peer.Say(feishupeer.Incoming{Sender: alice, Text: "sync"}))
}

// reply is a turn's answer to a message in a chat.
func reply(chat, replyTo, turn, text string) channels.Reply {
	return channels.Reply{ID: turn + "#a", Route: protocol.Route{Channel: Name, ChatID: chat, ReplyTo: replyTo},
		Turn: turn, Text: text, Kind: protocol.ReplyAnswer}
}
