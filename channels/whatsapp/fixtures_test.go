package whatsapp

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/channeltest"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
)

// Who the tests talk as.
const (
	alice = "15551234567"
	bob   = "15557654321"
	group = "120363000000000001"
)

// harness is the channel on a fakeWA, publishing into a list where the manager would be.
type harness struct {
	*channeltest.Run[*Channel]
	wa *fakeWA
}

// envFor is a channel's env with block as channels.whatsapp.
func envFor(t *testing.T, block map[string]any) channeltest.Env {
	return channeltest.NewEnv(t, Name, channeltest.Merge(map[string]any{"enabled": true, "allowFrom": []string{"*"}}, block))
}

// depsFor are the deps of envFor, and where they log.
func depsFor(t *testing.T, block map[string]any) (channels.Deps, *testenv.SyncBuffer) {
	env := envFor(t, block)
	return env.Deps, env.Logs
}

// startHarness starts a channel with block on wa and waits for it to be connected.
func startHarness(t *testing.T, wa *fakeWA, block map[string]any) *harness {
	t.Helper()
	h := startDown(t, wa, block)
	wa.push(&events.Connected{})
	require.Eventually(t, h.Ch.Connected, 5*time.Second, 5*time.Millisecond, "never connected")
	return h
}

// startDown starts a channel on wa without a Connected event.
func startDown(t *testing.T, wa *fakeWA, block map[string]any) *harness {
	t.Helper()
	return &harness{Run: channeltest.Start(t, envFor(t, block), onFake(wa), channeltest.NoWait()), wa: wa}
}

// onFake builds channels that open wa instead of whatsmeow.
func onFake(wa *fakeWA) func(channels.Deps) (*Channel, error) {
	return func(d channels.Deps) (*Channel, error) {
		ch, err := New(d)
		if err == nil {
			ch.open = wa.opener()
		}
		return ch, err
	}
}

// sync sends a DM and waits for it: events are handled in order, so
// everything pushed before was handled (taken or dropped) too.
func (h *harness) sync() protocol.Inbound {
	h.T.Helper()
	id := "SYNC" + time.Now().Format("150405.000000000")
	h.wa.push(dm(id, bob, "sync"))
	return h.WaitLast("whatsapp:" + id)
}

// reply is a turn's answer to a message in a chat.
func reply(chat, replyTo, sender, text string) channels.Reply {
	return channels.Reply{ID: "t1#a", Route: protocol.Route{Channel: Name, ChatID: chat, ReplyTo: replyTo, SenderID: sender},
		Turn: "t1", Text: text, Kind: protocol.ReplyAnswer}
}
