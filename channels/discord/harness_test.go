package discord

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/channeltest"
	"github.com/nanobot-durable/nanobot/channels/discord/discordpeer"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
)

// Ids the tests talk in.
const (
	guild   = "900000000000000001"
	general = "900000000000000010"
	thread  = "900000000000000020"
	dm      = "900000000000000030"
)

var alice = discordpeer.User{ID: "800000000000000001", Username: "alice"}

// harness is the channel connected to a discordpeer, publishing into a
// list where the manager would be.
type harness struct {
	t         *testing.T
	peer      *discordpeer.Peer
	ch        *Channel
	logs      *testenv.SyncBuffer
	workspace string

	*channeltest.Publisher // stands where the manager is
}

// startHarness connects a channel with block (merged over a token and the
// peer's apiBase) to a new peer with a guild channel, a thread and a DM.
func startHarness(t *testing.T, block map[string]any) *harness {
	t.Helper()
	peer := discordpeer.New(t)
	peer.GuildChannel(guild, general)
	peer.Thread(guild, general, thread)
	peer.DM(dm)
	return startOn(t, peer, block)
}

// depsFor are a channel's deps: block over a token and the peer's apiBase.
func depsFor(t *testing.T, peer *discordpeer.Peer, block map[string]any) channels.Deps {
	t.Helper()
	b := map[string]any{"enabled": true, "token": discordpeer.Token, "apiBase": peer.URL(), "allowFrom": []string{"*"},
		"workingEmoji": ""}
	for k, v := range block {
		b[k] = v
	}
	raw, err := json.Marshal(b)
	require.NoError(t, err)
	cfg := config.Default()
	cfg.Channels.Other = map[string]json.RawMessage{"discord": raw}
	return channels.Deps{Config: cfg, Workspace: t.TempDir(),
		Log: slog.New(slog.NewTextHandler(&testenv.SyncBuffer{}, nil))}
}

func startOn(t *testing.T, peer *discordpeer.Peer, block map[string]any) *harness {
	t.Helper()
	deps := depsFor(t, peer, block)
	logs := &testenv.SyncBuffer{}
	deps.Log = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	workspace := deps.Workspace
	ch, err := New(deps)
	require.NoError(t, err)
	h := &harness{t: t, peer: peer, ch: ch, logs: logs, workspace: workspace, Publisher: channeltest.NewPublisher(t)}
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
	require.Eventually(t, peer.Connected, 10*time.Second, 10*time.Millisecond, "the bot never identified")
	return h
}

// sync sends a DM and waits for it: messages are handled in order, so
// everything sent before was handled (taken or dropped) too.
func (h *harness) sync() protocol.Inbound {
	h.t.Helper()
	n := len(h.Published())
	id := h.peer.Say(discordpeer.Incoming{ChannelID: dm, Author: alice, Content: "sync"})
	got := h.WaitPublished(n + 1)
	require.Equal(h.t, "discord:"+id, got[len(got)-1].ID, "the sync message comes last")
	return got[len(got)-1]
}

// reply is a turn's answer to a message in a chat.
func reply(chat, replyTo, turn, text string) channels.Reply {
	return channels.Reply{ID: turn + "#a", Route: protocol.Route{Channel: Name, ChatID: chat, ReplyTo: replyTo},
		Turn: turn, Text: text, Kind: protocol.ReplyAnswer}
}
