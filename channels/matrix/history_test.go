package matrix

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestInviteThenWriteAtOnceIsAnswered: a user who invites the bot and
// writes at once, before the bot has joined, is answered. The bot's sync
// loop is stopped while the user does both, so the message is before the
// bot's join in the room and comes in the same /sync batch as the join,
// every time. What was said before the invite stays unanswered history.
func TestInviteThenWriteAtOnceIsAnswered(t *testing.T) {
	h := startHarness(t, nil)
	h.stop() // the saved token is where the next start syncs from
	room := h.alice.CreateRoom(t, true)
	h.alice.SendText(t, room, "a note to myself, before the bot is invited")
	h.alice.Invite(t, room, h.bot)
	h.alice.SendText(t, room, "hi bot, are you there?")
	h.start()
	require.Equal(t, "hi bot, are you there?", h.waitInbound(1)[0].Content, "the message right after the invite is answered")
	require.True(t, h.alice.Joined(t, room, h.bot))
	h.alice.SendText(t, room, "and after the join")
	require.Equal(t, []string{"hi bot, are you there?", "and after the join"}, contents(h.waitInbound(2)),
		"nothing before the invite, nothing twice")
}

// TestBotRenameIsNotAJoin: the bot's new display name is a member event
// "join" after "join" in every room; what came before it in the same
// batch is still answered, not cut off as if the bot had just joined.
func TestBotRenameIsNotAJoin(t *testing.T) {
	h := startHarness(t, nil)
	room := h.dm(h.alice)
	h.alice.SendText(t, room, "one")
	h.waitInbound(1)
	h.stop()
	h.alice.SendText(t, room, "two")
	h.bot.SetDisplayName(t, "Nanobot Two")
	require.Eventually(t, func() bool { return h.alice.MemberName(t, room, h.bot) == "Nanobot Two" }, defaultWait, pollEvery,
		"the rename reached the room")
	h.alice.SendText(t, room, "three")
	h.start()
	require.Equal(t, []string{"one", "two", "three"}, contents(h.waitInbound(3)))
}
