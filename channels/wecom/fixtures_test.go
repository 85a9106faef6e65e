package wecom

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/channeltest"
	"github.com/nanobot-durable/nanobot/channels/wecom/wecompeer"
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
	*channeltest.Run[*Channel]
	peer *wecompeer.Peer
}

// envFor is a channel's env: block over the peer's credentials and wsUrl.
func envFor(t *testing.T, peer *wecompeer.Peer, block map[string]any) channeltest.Env {
	return channeltest.NewEnv(t, Name, channeltest.Merge(map[string]any{"enabled": true, "botId": wecompeer.BotID,
		"secret": wecompeer.Secret, "wsUrl": peer.URL(), "allowFrom": []string{"*"}}, block))
}

// depsFor are the deps of envFor, and where they log.
func depsFor(t *testing.T, peer *wecompeer.Peer, block map[string]any) (channels.Deps, *testenv.SyncBuffer) {
	env := envFor(t, peer, block)
	return env.Deps, env.Logs
}

// quick is New with a quiet heartbeat and a short backoff, for tests.
func quick(d channels.Deps) (*Channel, error) {
	ch, err := New(d)
	if err == nil {
		ch.heartbeat, ch.backoff = time.Hour, channels.Backoff{Min: 20 * time.Millisecond}
	}
	return ch, err
}

// startHarness connects a channel with block to a new peer.
func startHarness(t *testing.T, block map[string]any) *harness {
	t.Helper()
	peer := wecompeer.New(t)
	h := &harness{Run: channeltest.Start(t, envFor(t, peer, block), quick), peer: peer}
	h.waitUp()
	return h
}

// waitUp waits for the bot to be subscribed.
func (h *harness) waitUp() {
	h.T.Helper()
	require.Eventually(h.T, func() bool { return h.peer.Subscribed() && h.Ch.Connected() }, 10*time.Second, 10*time.Millisecond,
		"the bot never subscribed")
}

// sync sends a DM and waits for it: callbacks are handled in order, so
// everything sent before was handled (taken or dropped) too.
func (h *harness) sync() protocol.Inbound {
	h.T.Helper()
	_, id := h.peer.Say(wecompeer.Message{From: alice, Text: "sync"})
	return h.WaitLast("wecom:" + id)
}

// answer is a turn's answer to a message in a chat.
func answer(chat, replyTo, turn, text string) channels.Reply {
	return channels.Reply{ID: turn + "#a", Route: protocol.Route{Channel: Name, ChatID: chat, ReplyTo: replyTo},
		Turn: turn, Text: text, Kind: protocol.ReplyAnswer}
}
