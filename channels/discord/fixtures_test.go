package discord

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/channeltest"
	"github.com/nanobot-durable/nanobot/channels/discord/discordpeer"
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
	*channeltest.Run[*Channel]
	peer *discordpeer.Peer
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

// envFor is a channel's env: block over a token and the peer's apiBase.
func envFor(t *testing.T, peer *discordpeer.Peer, block map[string]any) channeltest.Env {
	return channeltest.NewEnv(t, Name, channeltest.Merge(map[string]any{"enabled": true, "token": discordpeer.Token,
		"apiBase": peer.URL(), "allowFrom": []string{"*"}, "workingEmoji": ""}, block))
}

// depsFor are the deps of envFor.
func depsFor(t *testing.T, peer *discordpeer.Peer, block map[string]any) channels.Deps {
	return envFor(t, peer, block).Deps
}

func startOn(t *testing.T, peer *discordpeer.Peer, block map[string]any) *harness {
	t.Helper()
	h := &harness{Run: channeltest.Start(t, envFor(t, peer, block), New), peer: peer}
	require.Eventually(t, peer.Connected, 10*time.Second, 10*time.Millisecond, "the bot never identified")
	return h
}

// sync sends a DM and waits for it: messages are handled in order, so
// everything sent before was handled (taken or dropped) too.
func (h *harness) sync() protocol.Inbound {
	h.T.Helper()
	return h.WaitLast("discord:" + h.peer.Say(discordpeer.Incoming{ChannelID: dm, Author: alice, Content: "sync"}))
}

// reply is a turn's answer to a message in a chat.
func reply(chat, replyTo, turn, text string) channels.Reply {
	return channels.Reply{ID: turn + "#a", Route: protocol.Route{Channel: Name, ChatID: chat, ReplyTo: replyTo},
		Turn: turn, Text: text, Kind: protocol.ReplyAnswer}
}
