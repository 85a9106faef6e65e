package matrix

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/matrix/dendritepeer"
)

// TestStreamIsEditedInPlace: with streaming on, the deltas post one event
// answering the user's and edit it (m.replace) at most about once a
// second; the answer replaces that event rather than posting another.
func TestStreamIsEditedInPlace(t *testing.T) {
	h := startHarness(t, map[string]any{"streaming": true})
	room := h.dm(h.alice)
	asked := h.alice.SendText(t, room, "count")
	in := h.waitInbound(1)[0]
	delta := func(s string) {
		h.streams.SendDelta(context.Background(), channels.StreamEvent{SessionKey: in.SessionKey, Route: in.Route, Turn: "turn-1", Delta: s})
	}
	delta("One")
	require.Eventually(t, func() bool { mine, _ := h.botMessages(room); return len(mine) == 1 }, 30*time.Second, 20*time.Millisecond,
		"the first delta posts an event")
	started := time.Now()
	delta(", two")
	delta(", three")
	mine, all := h.botMessages(room)
	require.Eventually(t, func() bool {
		mine, all = h.botMessages(room)
		return dendritepeer.ShownBody(all, mine[0]) == "One, two, three"
	}, 30*time.Second, 20*time.Millisecond, "later deltas edit it")
	require.GreaterOrEqual(t, time.Since(started), 900*time.Millisecond, "edits wait the stream interval")
	require.Len(t, dendritepeer.Edits(all, mine[0].ID), 1, "two deltas in one interval: one edit")
	require.Equal(t, asked, mine[0].ReplyTo(), "the streamed event replies to the user's")

	h.answer(in, "turn-1", "One, two, **three**.")
	mine, all = h.lastShows(room, "One, two, **three**.")
	require.Len(t, mine, 1, "the answer replaced the streamed event")
	shown := dendritepeer.Shown(all, mine[0])
	require.Equal(t, "One, two, **three**.", shown["body"])
	require.Equal(t, "<p>One, two, <strong>three</strong>.</p>", shown["formatted_body"])
	last := dendritepeer.Edits(all, mine[0].ID)
	require.Equal(t, "* One, two, **three**.", last[len(last)-1].Body(), "the fallback older clients show")
}

// TestStreamAfterToolStartsANewEvent: text streamed before a tool stays,
// the tool's hint is shown (sendToolHints), the model call after it streams
// into a new event, which the answer replaces.
func TestStreamAfterToolStartsANewEvent(t *testing.T) {
	h := startHarness(t, map[string]any{"streaming": true})
	room := h.dm(h.alice)
	h.alice.SendText(t, room, "look around")
	in := h.waitInbound(1)[0]
	send := func(ev channels.StreamEvent) {
		ev.SessionKey, ev.Route, ev.Turn = in.SessionKey, in.Route, "turn-1"
		h.streams.SendDelta(context.Background(), ev)
	}
	send(channels.StreamEvent{Delta: "Let me look."})
	send(channels.StreamEvent{End: true})
	require.Eventually(t, func() bool { mine, _ := h.botMessages(room); return len(mine) == 1 }, 30*time.Second, 20*time.Millisecond)
	send(channels.StreamEvent{ToolHint: "list_dir ."})
	send(channels.StreamEvent{Iteration: 1, Delta: "Two files."})
	require.Eventually(t, func() bool { mine, _ := h.botMessages(room); return len(mine) == 3 }, 30*time.Second, 20*time.Millisecond,
		"the hint, then the call after the tool streams into a new event")
	h.answer(in, "turn-1", "Two files: a and b.")
	mine, all := h.lastShows(room, "Two files: a and b.")
	require.Len(t, mine, 3)
	require.Equal(t, "Let me look.", dendritepeer.ShownBody(all, mine[0]))
	require.Equal(t, "↳ list_dir .", dendritepeer.ShownBody(all, mine[1]))
	require.Equal(t, "Two files: a and b.", dendritepeer.ShownBody(all, mine[2]))
}

// TestStreamingOffPostsOnce: without streaming (nanobot's default) deltas
// draw nothing and the answer is one event.
func TestStreamingOffPostsOnce(t *testing.T) {
	h := startHarness(t, nil)
	room := h.dm(h.alice)
	h.alice.SendText(t, room, "hi")
	in := h.waitInbound(1)[0]
	h.streams.SendDelta(context.Background(), channels.StreamEvent{SessionKey: in.SessionKey, Route: in.Route, Turn: "turn-1", Delta: "Hel"})
	h.answer(in, "turn-1", "Hello.")
	mine, all := h.lastShows(room, "Hello.")
	require.Len(t, mine, 1)
	require.Empty(t, dendritepeer.Edits(all, mine[0].ID))
	require.Equal(t, "Hello.", mine[0].Body())
}
