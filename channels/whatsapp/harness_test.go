package whatsapp

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/channeltest"
	"github.com/nanobot-durable/nanobot/config"
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
	t    *testing.T
	wa   *fakeWA
	ch   *Channel
	logs *testenv.SyncBuffer
	home string

	*channeltest.Publisher
}

// depsFor are a channel's deps with block as channels.whatsapp.
func depsFor(t *testing.T, block map[string]any) (channels.Deps, *testenv.SyncBuffer) {
	t.Helper()
	b := map[string]any{"enabled": true, "allowFrom": []string{"*"}}
	for k, v := range block {
		b[k] = v
	}
	raw, err := json.Marshal(b)
	require.NoError(t, err)
	cfg := config.Default()
	cfg.Channels.Other = map[string]json.RawMessage{"whatsapp": raw}
	logs := &testenv.SyncBuffer{}
	return channels.Deps{Config: cfg, Workspace: t.TempDir(), Home: t.TempDir(),
		Log: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}, logs
}

// startHarness starts a channel with block on wa and waits for it to be connected.
func startHarness(t *testing.T, wa *fakeWA, block map[string]any) *harness {
	t.Helper()
	h := startDown(t, wa, block)
	wa.push(&events.Connected{})
	require.Eventually(t, h.ch.Connected, 5*time.Second, 5*time.Millisecond, "never connected")
	return h
}

// startDown starts a channel on wa without a Connected event.
func startDown(t *testing.T, wa *fakeWA, block map[string]any) *harness {
	t.Helper()
	deps, logs := depsFor(t, block)
	ch, err := New(deps)
	require.NoError(t, err)
	ch.open = wa.opener()
	h := &harness{t: t, wa: wa, ch: ch, logs: logs, home: deps.Home, Publisher: channeltest.NewPublisher(t)}
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
	return h
}

// sync sends a DM and waits for it: events are handled in order, so
// everything pushed before was handled (taken or dropped) too.
func (h *harness) sync() protocol.Inbound {
	h.t.Helper()
	id := "SYNC" + time.Now().Format("150405.000000000")
	h.wa.push(dm(id, bob, "sync"))
	var got []protocol.Inbound
	// Wait for the sync message itself: a count taken before it could be met by earlier messages.
	require.Eventually(h.t, func() bool {
		got = h.Published()
		return slices.ContainsFunc(got, func(m protocol.Inbound) bool { return m.ID == "whatsapp:"+id })
	}, 5*time.Second, 2*time.Millisecond, "the sync message was never published")
	require.Equal(h.t, "whatsapp:"+id, got[len(got)-1].ID, "the sync message comes last")
	return got[len(got)-1]
}

// reply is a turn's answer to a message in a chat.
func reply(chat, replyTo, sender, text string) channels.Reply {
	return channels.Reply{ID: "t1#a", Route: protocol.Route{Channel: Name, ChatID: chat, ReplyTo: replyTo, SenderID: sender},
		Turn: "t1", Text: text, Kind: protocol.ReplyAnswer}
}
