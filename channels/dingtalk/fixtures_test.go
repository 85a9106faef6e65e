package dingtalk

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/channeltest"
	"github.com/nanobot-durable/nanobot/channels/dingtalk/dingtalkpeer"
	"github.com/nanobot-durable/nanobot/protocol"
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
	*channeltest.Run[*Channel]
	peer *dingtalkpeer.Peer
}

// envFor is a channel's env: block over the peer's credentials and apiBase.
func envFor(t *testing.T, peer *dingtalkpeer.Peer, block map[string]any) channeltest.Env {
	return channeltest.NewEnv(t, Name, channeltest.Merge(map[string]any{"enabled": true, "clientId": dingtalkpeer.ClientID,
		"clientSecret": dingtalkpeer.ClientSecret, "apiBase": peer.URL(), "allowFrom": []string{"*"}}, block))
}

// startHarness connects a channel with block to a new peer.
func startHarness(t *testing.T, block map[string]any) *harness {
	t.Helper()
	peer := dingtalkpeer.New(t)
	return startOn(t, peer, envFor(t, peer, block))
}

func startOn(t *testing.T, peer *dingtalkpeer.Peer, env channeltest.Env) *harness {
	t.Helper()
	h := &harness{Run: channeltest.Start(t, env, New), peer: peer}
	require.Eventually(t, peer.Connected, 10*time.Second, 10*time.Millisecond, "the peer never saw the stream")
	return h
}

// sync sends a DM and waits for it: messages are handled in order, so
// everything pushed before was handled (taken or dropped) too.
func (h *harness) sync() protocol.Inbound {
	h.T.Helper()
	return h.WaitLast("dingtalk:" + h.peer.Say(dingtalkpeer.Incoming{From: alice, Text: "sync"}))
}

// reply is a turn's answer on the route of an inbound message.
func reply(route protocol.Route, turn, text string) channels.Reply {
	return channels.Reply{ID: turn + "#a", Route: route, Turn: turn, Text: text, Kind: protocol.ReplyAnswer}
}
