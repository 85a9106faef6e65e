package discord

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/channeltest"
	"github.com/nanobot-durable/nanobot/channels/discord/discordpeer"
	"github.com/nanobot-durable/nanobot/protocol"
)

var asked = protocol.ApprovalRequest{ID: "1a2b", Tool: "exec", Args: "rm -rf build", Key: "exec rm", Timeout: time.Hour}

// behindManager makes the channel publish through a real manager that lets only allowFrom in.
func behindManager(t *testing.T, h *harness, unified bool, allowFrom ...string) *channeltest.Bus {
	cfg := depsFor(t, h.peer, map[string]any{"allowFrom": allowFrom}).Config
	cfg.Agents.Defaults.UnifiedSession = unified
	publish, b := channeltest.BehindManager(t, cfg, h.Ch)
	h.Ch.Attach(publish)
	return b
}

// postRequest shows the request in a chat and returns the message it is.
func postRequest(t *testing.T, h *harness, chat string) discordpeer.Message {
	r := channels.Reply{ID: "t1#approval-1a2b", Route: protocol.Route{Channel: Name, ChatID: chat}, Turn: "t1",
		Kind: protocol.ReplyApproval, Approval: &asked, Text: asked.Text()}
	require.NoError(t, channels.Deliver(context.Background(), h.Ch, r))
	msgs := h.peer.Messages(chat)
	require.Len(t, msgs, 1)
	return msgs[0]
}

// TestApprovalRequestHasButtons: the request is posted with one action row
// of three buttons whose custom_ids are the commands a press sends.
func TestApprovalRequestHasButtons(t *testing.T) {
	h := startHarness(t, nil)
	m := postRequest(t, h, general)
	require.Contains(t, m.Content, "Approval needed [1a2b]")
	var rows []struct {
		Type       int `json:"type"`
		Components []struct {
			Type     int    `json:"type"`
			Label    string `json:"label"`
			Style    int    `json:"style"`
			CustomID string `json:"custom_id"`
		} `json:"components"`
	}
	require.NoError(t, json.Unmarshal([]byte(m.Components), &rows), m.Components)
	require.Len(t, rows, 1)
	require.Equal(t, 1, rows[0].Type, "an action row")
	var got [][3]any
	for _, b := range rows[0].Components {
		require.Equal(t, 2, b.Type, "a button")
		got = append(got, [3]any{b.Label, b.Style, b.CustomID})
	}
	require.Equal(t, [][3]any{{"Approve", 3, "/approve 1a2b"}, {"Deny", 4, "/deny 1a2b"}, {"Always this command", 2, "/approve 1a2b always"}}, got)
	require.NoError(t, channels.Deliver(context.Background(), h.Ch, reply(general, "", "t2", "plain")))
	require.Empty(t, h.peer.Messages(general)[1].Components, "a plain reply has no buttons")
}

// TestPressBecomesThePressersMessage: a press in a thread is the presser's
// message with the command's text in that thread — the session a typed
// message there has, the thread's own even under unifiedSession — once,
// however often it is delivered; the interaction gets a deferred update
// and the buttons are taken off.
func TestPressBecomesThePressersMessage(t *testing.T) {
	h := startHarness(t, nil)
	b := behindManager(t, h, true, alice.ID)
	m := postRequest(t, h, thread)
	h.peer.Say(discordpeer.Incoming{ChannelID: thread, GuildID: guild, Author: alice, Content: "<@" + discordpeer.BotID + "> /approve 1a2b",
		Mentions: []discordpeer.User{discordpeer.Bot}})
	press := discordpeer.Press{ID: h.peer.ID(), ChannelID: thread, GuildID: guild, User: alice, MessageID: m.ID, CustomID: "/approve 1a2b always"}
	h.peer.Press(press)
	h.peer.Press(press)                                                             // delivered again
	h.peer.Say(discordpeer.Incoming{ChannelID: dm, Author: alice, Content: "sync"}) // handled in order, after both
	require.Eventually(t, func() bool { return len(b.Admitted()) == 3 }, 10*time.Second, 10*time.Millisecond)
	require.Equal(t, "sync", b.Admitted()[2].Content, "the press went in once")
	require.Len(t, h.peer.Responses(), 1)
	typed, pressed := b.Admitted()[0], b.Admitted()[1]
	require.Equal(t, "/approve 1a2b always", pressed.Content)
	require.Equal(t, alice.ID, pressed.Route.SenderID)
	require.Equal(t, thread, pressed.Route.ChatID)
	require.Equal(t, typed.SessionKey, pressed.SessionKey, "the thread's session, as for a typed answer")
	require.Equal(t, "discord:"+general+":thread:"+thread, pressed.SessionKey, "a thread keeps its session (nanobot)")
	require.Equal(t, channels.UnifiedSessionKey, b.Admitted()[2].SessionKey, "a DM joins the unified session")
	require.True(t, pressed.Group)
	require.Equal(t, 6, h.peer.Responses()[0].Type, "a deferred update")
	require.Eventually(t, func() bool { return h.peer.Messages(thread)[0].Components == "[]" }, 10*time.Second, 10*time.Millisecond,
		"the buttons are taken off the answered request")
}

// TestStrangersPressIsRefused: a press by someone not allowed is refused
// by the manager like a typed message: nothing reaches the agent, only the
// presser is told, and the buttons stay; a press of another button is not a message.
func TestStrangersPressIsRefused(t *testing.T) {
	h := startHarness(t, nil)
	b := behindManager(t, h, false, alice.ID)
	m := postRequest(t, h, general)
	bob := discordpeer.User{ID: "800000000000000002", Username: "bob"}
	h.peer.Press(discordpeer.Press{ChannelID: general, GuildID: guild, User: bob, MessageID: m.ID, CustomID: "/approve 1a2b"})
	h.peer.Press(discordpeer.Press{ChannelID: general, GuildID: guild, User: alice, MessageID: m.ID, CustomID: "/new"})
	require.Eventually(t, func() bool { return len(h.peer.Responses()) == 2 }, 10*time.Second, 10*time.Millisecond)
	refused := h.peer.Responses()[0]
	require.Equal(t, 4, refused.Type)
	require.True(t, refused.Ephemeral, "only the presser sees it")
	require.Equal(t, pressRefusedText, refused.Content)
	require.Empty(t, b.Admitted())
	require.NotEqual(t, "[]", h.peer.Messages(general)[0].Components, "the buttons stay")
}
