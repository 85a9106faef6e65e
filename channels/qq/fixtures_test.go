package qq

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/channeltest"
	"github.com/nanobot-durable/nanobot/channels/qq/qqpeer"
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
	*channeltest.Run[*Channel]
	peer *qqpeer.Peer
	mask *secrets.Set
}

// envFor is a channel's env: block over the peer's app and bases.
func envFor(t *testing.T, peer *qqpeer.Peer, block map[string]any) channeltest.Env {
	return channeltest.NewEnv(t, Name, channeltest.Merge(map[string]any{"enabled": true, "appId": qqpeer.AppID,
		"secret": qqpeer.Secret, "apiBase": peer.URL(), "authBase": peer.URL(), "allowFrom": []string{"*"}, "ackMessage": ""}, block))
}

// depsFor are the deps of envFor.
func depsFor(t *testing.T, peer *qqpeer.Peer, block map[string]any) channels.Deps {
	return envFor(t, peer, block).Deps
}

// startHarness connects a channel with block to a new peer.
func startHarness(t *testing.T, block map[string]any) *harness {
	t.Helper()
	return startOn(t, qqpeer.New(t), block)
}

func startOn(t *testing.T, peer *qqpeer.Peer, block map[string]any) *harness {
	t.Helper()
	run := channeltest.Start(t, envFor(t, peer, block), New)
	require.Eventually(t, peer.Connected, 10*time.Second, 10*time.Millisecond, "the bot never identified")
	return &harness{Run: run, peer: peer, mask: run.Secrets}
}

// sync sends a C2C message and waits for it: messages are handled in
// order, so everything sent before was handled (taken or dropped) too.
func (h *harness) sync() protocol.Inbound {
	h.T.Helper()
	return h.WaitLast("qq:" + h.peer.C2C(alice, "sync"))
}

// reply is a turn's answer to a message in a chat.
func reply(chat, replyTo, turn, text string) channels.Reply {
	return channels.Reply{ID: turn + "#a", Route: protocol.Route{Channel: Name, ChatID: chat, ReplyTo: replyTo},
		Turn: turn, Text: text, Kind: protocol.ReplyAnswer}
}
