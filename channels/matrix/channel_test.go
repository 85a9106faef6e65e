package matrix

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/protocol"
)

// TestDMIsAnsweredInReply: an allowed user's invite is joined, the DM's
// message reaches the agent as a direct message carrying its event id,
// and the answer comes as HTML with a plain body, replying to that event.
func TestDMIsAnsweredInReply(t *testing.T) {
	h := startHarness(t, map[string]any{"groupPolicy": "mention"})
	room := h.dm(h.alice)
	h.waitLog("matrix joined a room on invite", room, h.alice.ID)
	asked := h.alice.SendText(t, room, "what is 2+2?")
	in := h.waitInbound(1)[0]
	require.Equal(t, protocol.Route{Channel: Name, ChatID: room, ReplyTo: asked, SenderID: h.alice.ID}, in.Route)
	require.Equal(t, "what is 2+2?", in.Content)
	require.False(t, in.Group, "a room of two is a DM: groupPolicy does not apply")
	require.Equal(t, asked, in.Metadata["message_id"])
	require.Equal(t, "matrix:"+room, in.SessionKey)

	h.answer(in, "turn-1", "**Four**, of course.")
	mine, _ := h.lastShows(room, "**Four**, of course.")
	require.Len(t, mine, 1)
	reply := mine[0]
	require.Equal(t, "**Four**, of course.", reply.Body())
	require.Equal(t, "org.matrix.custom.html", reply.String("format"))
	require.Equal(t, "<p><strong>Four</strong>, of course.</p>", reply.String("formatted_body"))
	require.Equal(t, asked, reply.ReplyTo(), "the answer replies to the user's event (m.in_reply_to)")
	require.Equal(t, map[string]any{}, reply.Content["m.mentions"], "nobody is pinged")
}

// TestInviteFromStrangerIsNotJoined: only invites from allowed senders
// (allowFrom, or pairing) are joined.
func TestInviteFromStrangerIsNotJoined(t *testing.T) {
	h := startHarness(t, nil)
	room := h.bob.CreateRoom(t, true, h.bot)
	h.waitLog("matrix invite from a sender not allowed; not joined", room, h.bob.ID)
	require.False(t, h.bob.Joined(t, room, h.bot))
	h.dm(h.alice) // an allowed invite after it is joined: the loop went on
}

// TestRoomMentionPolicy: in a room of three with groupPolicy "mention", a
// message that does not mention the bot is ignored; a mention by
// m.mentions (Element) or by the bot's id in the body (older clients) is
// answered, the "Nanobot: " prefix taken off.
func TestRoomMentionPolicy(t *testing.T) {
	h := startHarness(t, map[string]any{"groupPolicy": "mention", "allowFrom": []string{"*"}})
	carol := h.hs.RegisterUser(t, "carol")
	room := h.alice.CreateRoom(t, false, h.bot, carol)
	carol.Join(t, room)
	require.Eventually(t, func() bool { return h.alice.Joined(t, room, h.bot) }, 30*time.Second, 20*time.Millisecond)

	chatter := h.alice.SendText(t, room, "just chatting about nanobots")
	// m.mentions names carol only: the bot's name in the body is not a mention then.
	toCarol := h.alice.SendMention(t, room, carol, "carol", "ask Nanobot later")
	mention := h.alice.SendMention(t, room, h.bot, botName, "what now?")
	legacy := h.alice.SendText(t, room, "hey "+h.bot.ID+" and you?")
	got := h.waitInbound(2)
	require.Len(t, got, 2)
	require.Equal(t, mention, got[0].Route.ReplyTo)
	require.Equal(t, "what now?", got[0].Content)
	require.True(t, got[0].Group)
	require.Equal(t, legacy, got[1].Route.ReplyTo)
	h.waitLog("not for the bot (groupPolicy)", chatter)
	h.waitLog("not for the bot (groupPolicy)", toCarol)
}

// TestAllowlistPolicy: "allowlist" answers the rooms of groupAllowFrom only.
func TestAllowlistPolicy(t *testing.T) {
	h := newHarness(t, map[string]any{"groupPolicy": "allowlist", "allowFrom": []string{"*"}})
	carol := h.hs.RegisterUser(t, "carol")
	listed := h.alice.CreateRoom(t, false, carol)
	other := h.alice.CreateRoom(t, false, carol)
	carol.Join(t, listed)
	carol.Join(t, other)
	h.env.Config.Channels.Other["matrix"] = withKey(t, h.env.Config.Channels.Other["matrix"], "groupAllowFrom", []string{listed})
	h.start()
	for _, room := range []string{listed, other} {
		h.alice.Invite(t, room, h.bot)
		require.Eventually(t, func() bool { return h.alice.Joined(t, room, h.bot) }, 30*time.Second, 20*time.Millisecond)
	}
	skipped := h.alice.SendText(t, other, "in the other room")
	answered := h.alice.SendText(t, listed, "in the listed room")
	got := h.waitInbound(1)
	require.Equal(t, answered, got[0].Route.ReplyTo)
	h.waitLog("not for the bot (groupPolicy)", skipped)
	require.Len(t, h.bus.Admitted(), 1)
}

// TestStrangerIsRefusedByTheManager: a message from a sender outside
// allowFrom in a room the bot is in never reaches the agent.
func TestStrangerIsRefusedByTheManager(t *testing.T) {
	h := startHarness(t, nil)
	room := h.alice.CreateRoom(t, false, h.bot, h.bob)
	h.bob.Join(t, room)
	require.Eventually(t, func() bool { return h.alice.Joined(t, room, h.bot) }, 30*time.Second, 20*time.Millisecond)
	h.bob.SendText(t, room, "let me in")
	ok := h.alice.SendText(t, room, "hello")
	got := h.waitInbound(1)
	require.Equal(t, ok, got[0].Route.ReplyTo)
	h.waitLog("message refused: sender not allowed", h.bob.ID)
	require.Len(t, h.bus.Admitted(), 1)
}

// TestThreadKeepsItsSession: a message in a thread gets the thread's own
// session (nanobot's per-thread key) and the answer stays in the thread.
func TestThreadKeepsItsSession(t *testing.T) {
	h := startHarness(t, nil)
	room := h.dm(h.alice)
	root := h.alice.SendText(t, room, "first")
	h.waitInbound(1)
	inThread := h.alice.Send(t, room, "m.room.message", map[string]any{"msgtype": "m.text", "body": "in the thread",
		"m.relates_to": map[string]any{"rel_type": "m.thread", "event_id": root, "is_falling_back": true,
			"m.in_reply_to": map[string]any{"event_id": root}}})
	in := h.waitInbound(2)[1]
	require.Equal(t, root, in.Route.ThreadID)
	require.Equal(t, "matrix:"+room+":thread:"+root, in.SessionKey)
	h.answer(in, "turn-1", "threaded answer")
	mine, _ := h.lastShows(room, "threaded answer")
	require.Len(t, mine, 1)
	rel := mine[0].Relation()
	require.Equal(t, "m.thread", rel["rel_type"])
	require.Equal(t, root, rel["event_id"])
	require.Equal(t, inThread, mine[0].ReplyTo())
}

// TestTypingIsShown: the manager's typing reaches the room and the answer ends it.
func TestTypingIsShown(t *testing.T) {
	h := startHarness(t, nil)
	room := h.dm(h.alice)
	h.alice.SendText(t, room, "hello")
	in := h.waitInbound(1)[0]
	require.Eventually(t, func() bool {
		return len(h.alice.Typing(t, room)) == 1 && h.alice.Typing(t, room)[0] == h.bot.ID
	}, 30*time.Second, 50*time.Millisecond, "the bot is shown typing while the turn runs")
	h.answer(in, "turn-1", "hi")
	require.Eventually(t, func() bool { return len(h.alice.Typing(t, room)) == 0 }, 30*time.Second, 50*time.Millisecond,
		"the answer ends the typing")
}

// TestOwnEchoIsSkipped: the bot's own events come back in
// its sync and are not taken for messages.
func TestOwnEchoIsSkipped(t *testing.T) {
	h := startHarness(t, nil)
	room := h.dm(h.alice)
	h.alice.SendText(t, room, "one")
	in := h.waitInbound(1)[0]
	h.answer(in, "turn-1", "reply")
	h.alice.SendText(t, room, "two")
	got := h.waitInbound(2)
	require.Len(t, got, 2)
	require.Equal(t, "two", got[1].Content)
}
