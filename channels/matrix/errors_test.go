package matrix

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"maunium.net/go/mautrix/id"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/matrix/dendritepeer"
	"github.com/nanobot-durable/nanobot/protocol"
)

// TestRateLimitBecomesRetryAfter: dendrite's M_LIMIT_EXCEEDED with its
// retry_after_ms becomes SendError.RetryAfter, and an auto-join it limits
// is tried again after that wait, not lost. (dendrite 0.13 limits joins
// and typing, not /send: the mapping is the one every send goes through.)
func TestRateLimitBecomesRetryAfter(t *testing.T) {
	h := startHarness(t, nil, dendritepeer.Options{RateLimit: &dendritepeer.RateLimit{
		Threshold: 1, CooloffMS: 1500, Exempt: []string{"alice", "bob"},
	}})
	room := h.dm(h.alice)
	h.waitLog("matrix auto-join failed; trying again with the next sync", "M_LIMIT_EXCEEDED")
	var se *channels.SendError
	require.Eventually(t, func() bool {
		_, err := h.ch.api().UserTyping(context.Background(), id.RoomID(room), true, time.Second)
		return errors.As(sendError("typing", err), &se)
	}, defaultWait, pollEvery, "dendrite never limited the bot")
	require.False(t, se.Permanent)
	require.Equal(t, 1500*time.Millisecond, se.RetryAfter)
	require.Contains(t, se.Error(), "M_LIMIT_EXCEEDED")
}

// TestRefusedRoomsArePermanent: a room the bot is not in (M_FORBIDDEN) and
// a room that does not exist are not retried.
func TestRefusedRoomsArePermanent(t *testing.T) {
	h := startHarness(t, nil)
	notIn := h.alice.CreateRoom(t, false, h.bob)
	for _, room := range []string{notIn, "!nowhere:" + dendritepeer.ServerName} {
		_, err := h.ch.SendPart(context.Background(), channels.Reply{Route: protocol.Route{Channel: Name, ChatID: room}}, channels.Part{Text: "hi"})
		var se *channels.SendError
		require.ErrorAs(t, err, &se, room)
		require.True(t, se.Permanent, "%s: %v", room, err)
	}
}

// TestRefusedTokenFailsTheStart: an access token the homeserver does not
// know fails the channel's start, naming the account.
func TestRefusedTokenFailsTheStart(t *testing.T) {
	h := newHarness(t, map[string]any{"accessToken": "not-a-token"})
	ch, err := New(channels.Deps{Config: h.env.Config, Workspace: h.env.Workspace})
	require.NoError(t, err)
	err = ch.Start(context.Background(), nil)
	require.ErrorContains(t, err, "refused the credentials of "+h.bot.ID)
}
