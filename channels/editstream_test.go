package channels

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/protocol"
)

// TestAnswerAfterToolsIsNewEvenWithoutHints: with sendToolHints off the
// hint is not drawn, but the text drawn before the tools ran stays, and an
// answer whose model call drew nothing comes as a new message below it.
func TestAnswerAfterToolsIsNewEvenWithoutHints(t *testing.T) {
	cfg := config.Default()
	cfg.Channels.SendToolHints = false
	m, ch, hub := startEditing(t, cfg)
	route := protocol.Route{Channel: "gated", ChatID: "c"}
	hub.Publish(StreamEvent{SessionKey: "gated:c", Route: route, Turn: "t1", Iteration: 1, Delta: "Let me look."})
	hub.Publish(StreamEvent{SessionKey: "gated:c", Route: route, Turn: "t1", Iteration: 1, ToolHint: "read_file a.txt"})
	require.NoError(t, m.Send(context.Background(), Reply{Route: route, Turn: "t1", Text: "The call failed.", Kind: protocol.ReplyAnswer}))
	calls, edits := ch.seen()
	require.Equal(t, []string{"Let me look.", "The call failed."}, calls, "no hint drawn; the answer is a message of its own")
	require.Empty(t, edits, "the text drawn before the tools is not overwritten")
}

// limited refuses its first posts with a rate limit.
type limited struct {
	*editing
	refusals int
}

func (c *limited) SendPart(ctx context.Context, r Reply, p Part) (string, error) {
	c.mu.Lock()
	refuse := c.refusals > 0
	c.refusals--
	c.mu.Unlock()
	if refuse {
		return "", &SendError{Err: errors.New("429"), RetryAfter: 20 * time.Millisecond}
	}
	return c.editing.SendPart(ctx, r, p)
}

// TestRateLimitedDrawingWaitsAndGoesOn: a platform's RetryAfter holds the
// painter that long; the stream is drawn after it, not given up.
func TestRateLimitedDrawingWaitsAndGoesOn(t *testing.T) {
	ch := &limited{editing: newEditing(), refusals: 2}
	m, hub := startManaging(t, config.Default(), ch)
	route := protocol.Route{Channel: "gated", ChatID: "c"}
	hub.Publish(StreamEvent{SessionKey: "gated:c", Route: route, Turn: "t1", Iteration: 1, Delta: "Hello"})
	require.Eventually(t, func() bool { calls, _ := ch.seen(); return len(calls) == 1 }, 5*time.Second, 5*time.Millisecond,
		"drawn once the rate limit passed")
	require.NoError(t, m.Send(context.Background(), Reply{Route: route, Turn: "t1", Text: "Hello, world", Kind: protocol.ReplyAnswer}))
	calls, edits := ch.seen()
	require.Equal(t, []string{"Hello"}, calls)
	require.Equal(t, []string{"m0=Hello, world"}, edits, "the answer took the drawn message over")
}

// TestAnswerDeliveredByAnotherGatewayEditsTheDrawnMessage: gateway A ran the
// model call and drew its stream; the answer's delivery is taken by gateway
// B, which drew nothing. A's hub names the drawn message once it shows the
// whole text, and B edits that message instead of posting the answer again.
func TestAnswerDeliveredByAnotherGatewayEditsTheDrawnMessage(t *testing.T) {
	_, drawer, hubA := startEditing(t, config.Default())
	b, other, _ := startEditing(t, config.Default())
	route := protocol.Route{Channel: "gated", ChatID: "c"}
	ev := StreamEvent{SessionKey: "gated:c", Route: route, Turn: "t1", Iteration: 2}
	for _, d := range []string{"Hel", "lo"} {
		ev.Delta = d
		hubA.Publish(ev)
	}
	hubA.Publish(StreamEvent{SessionKey: "gated:c", Route: route, Turn: "t1", Iteration: 2, End: true})
	id := hubA.Drawn(route, "t1", 2)
	require.Equal(t, "m0", id, "the drawer names the message it drew")
	calls, edits := drawer.seen()
	shown := "m0=" + calls[0]
	if len(edits) > 0 {
		shown = edits[len(edits)-1]
	}
	require.Equal(t, "m0=Hello", shown, "it shows the whole text before it is named")
	require.Empty(t, hubA.Drawn(route, "t1", 1), "a call that drew nothing names nothing")

	require.NoError(t, b.Send(context.Background(), Reply{Route: route, Turn: "t1", Text: "Hello", Kind: protocol.ReplyAnswer, Drawn: id}))
	calls, edits = other.seen()
	require.Empty(t, calls, "the other gateway posts no second answer")
	require.Equal(t, []string{"m0=Hello"}, edits, "it edits the drawn message to the answer")
}

// TestEditEveryFollowsTheStreamingKey: off is 0, which turns streaming off.
func TestEditEveryFollowsTheStreamingKey(t *testing.T) {
	require.Equal(t, time.Second, EditEvery(true, time.Second))
	require.Zero(t, EditEvery(false, time.Second))
}
