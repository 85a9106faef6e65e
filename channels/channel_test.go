package channels

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/protocol"
)

// TestSentAtReadsThePlatformsTime: RFC 3339 with or without fractions is
// the platform's time; anything else is a time taken now, not zero.
func TestSentAtReadsThePlatformsTime(t *testing.T) {
	require.True(t, time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC).Equal(SentAt("2026-03-01T09:30:00Z")))
	require.True(t, time.Date(2026, 3, 1, 9, 30, 0, 123000000, time.UTC).Equal(SentAt("2026-03-01T10:30:00.123+01:00")))
	before := time.Now()
	got := SentAt("yesterday")
	require.False(t, got.Before(before))
	require.False(t, got.After(time.Now()))
}

// bare is a channel that can show no reply.
type bare struct{}

func (bare) Name() string                         { return "bare" }
func (bare) Start(context.Context, Publish) error { return nil }
func (bare) Stop(context.Context) error           { return nil }

// TestDeliverPicksTheWay: a PartSender's reply goes part by part (even
// when it could Send), a Sender's whole, and a channel that is neither
// gets an error naming it.
func TestDeliverPicksTheWay(t *testing.T) {
	ctx := context.Background()
	parts := &capable{limit: 100, failAt: -1}
	require.NoError(t, Deliver(ctx, parts, Reply{Text: "hello world"}))
	calls, _ := parts.snapshot()
	require.Equal(t, []string{"hello world"}, calls)
	require.Empty(t, parts.sent)

	whole := &fakeChannel{name: "whole"}
	require.NoError(t, Deliver(ctx, whole, Reply{Text: "hello world"}))
	require.Len(t, whole.sent, 1)

	require.ErrorContains(t, Deliver(ctx, bare{}, Reply{Text: "hi"}), `channel "bare" can send no reply`)
}

// TestReplyEndsTurnAndAnswered: an answer or the gateway's own word ends
// the turn and names the channel's messages it answers; a message tool
// send or an approval request does not.
func TestReplyEndsTurnAndAnswered(t *testing.T) {
	ids := []string{"mattermost:p1", "slack:C1:1.2", "mattermost:", "mattermost:p2"}
	for kind, ends := range map[protocol.ReplyKind]bool{
		protocol.ReplyAnswer: true, protocol.ReplySystem: true,
		protocol.ReplyMessage: false, protocol.ReplyApproval: false,
	} {
		r := Reply{Kind: kind, MessageIDs: ids}
		require.Equal(t, ends, r.EndsTurn(), "kind %q", kind)
		if ends {
			require.Equal(t, []string{"p1", "p2"}, r.Answered("mattermost"), "kind %q", kind)
			require.Equal(t, []string{"C1:1.2"}, r.Answered("slack"), "kind %q", kind)
		} else {
			require.Empty(t, r.Answered("mattermost"), "kind %q", kind)
		}
	}
}
