package wecom

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/wecom/wecompeer"
)

func TestAnswerIsDrawnAsItIsGenerated(t *testing.T) {
	h := startHarness(t, nil)
	h.Ch.streamEvery = 10 * time.Millisecond
	req, _ := h.peer.Say(wecompeer.Message{From: alice, Text: "think aloud"})
	msg := h.WaitPublished(1)[0]
	ev := func(e channels.StreamEvent) {
		e.Route, e.Turn = msg.Route, "t1"
		h.Ch.SendDelta(context.Background(), e)
	}
	ev(channels.StreamEvent{Iteration: 1, Delta: "Let me "})
	ev(channels.StreamEvent{Iteration: 1, Delta: "look."})
	require.Eventually(t, func() bool {
		r := h.peer.Replies(req)
		return len(r) > 0 && r[len(r)-1].Content == "Let me look."
	}, 5*time.Second, 5*time.Millisecond)
	ev(channels.StreamEvent{Iteration: 1, ToolHint: "read_file notes.md"})
	require.Eventually(t, func() bool {
		r := h.peer.Replies(req)
		return r[len(r)-1].Content == "Let me look.\n\n↳ read_file notes.md"
	}, 5*time.Second, 5*time.Millisecond, "the tool hint shows under the text")
	ev(channels.StreamEvent{Iteration: 2, Delta: "The notes say **hi**."})
	require.Eventually(t, func() bool {
		r := h.peer.Replies(req)
		return r[len(r)-1].Content == "The notes say **hi**."
	}, 5*time.Second, 5*time.Millisecond, "the next model call draws over the last")

	require.NoError(t, channels.Deliver(context.Background(), h.Ch, answer(alice, msg.Route.ReplyTo, "t1", "The notes say **hi**.")))
	replies := h.peer.Replies(req)
	last := replies[len(replies)-1]
	require.True(t, last.Finish, "the answer finishes the stream")
	require.Equal(t, "The notes say **hi**.", last.Content)
	for i, r := range replies {
		require.Equal(t, replies[0].ID, r.ID, "one stream, drawn over")
		require.Equal(t, i == len(replies)-1, r.Finish, "finished once, at the end")
	}

	// The next turn's answer, not drawn, is a stream of its own.
	req2, _ := h.peer.Say(wecompeer.Message{From: alice, Text: "again"})
	msg2 := h.WaitPublished(2)[1]
	require.NoError(t, channels.Deliver(context.Background(), h.Ch, answer(alice, msg2.Route.ReplyTo, "t2", "Again.")))
	r2 := h.peer.Replies(req2)
	require.Len(t, r2, 1)
	require.NotEqual(t, replies[0].ID, r2[0].ID)
}

func TestNoDrawingWithoutSendProgress(t *testing.T) {
	h := startHarness(t, nil)
	h.Ch.progress = false // channels.sendProgress: false
	req, _ := h.peer.Say(wecompeer.Message{From: alice, Text: "quiet"})
	msg := h.WaitPublished(1)[0]
	h.Ch.SendDelta(context.Background(), channels.StreamEvent{Route: msg.Route, Turn: "t1", Iteration: 1, Delta: "partial"})
	require.NoError(t, channels.Deliver(context.Background(), h.Ch, answer(alice, msg.Route.ReplyTo, "t1", "Whole.")))
	r := h.peer.Replies(req)
	require.Len(t, r, 1, "only the answer")
	require.Equal(t, "Whole.", r[0].Content)
}
