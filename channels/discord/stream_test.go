package discord

import (
	"context"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/channeltest"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/protocol"
)

func delta(chat, turn, text string) channels.StreamEvent {
	return channels.StreamEvent{SessionKey: Name + ":" + chat, Route: protocol.Route{Channel: Name, ChatID: chat, ReplyTo: "1300000000000000004"},
		Turn: turn, Iteration: 1, Delta: text}
}

// manage puts the started channel under a manager, which draws its
// streams (channels.Editor) and delivers its answers, as a gateway does.
func manage(t *testing.T, h *harness) channeltest.Managed {
	return channeltest.Manage(t, config.Default(), h.Ch)
}

func end(chat, turn string) channels.StreamEvent {
	ev := delta(chat, turn, "")
	ev.End = true
	return ev
}

func TestStreamEditsOneMessageAndTheAnswerTakesItOver(t *testing.T) {
	h := startHarness(t, nil)
	m := manage(t, h)
	ctx := context.Background()
	held := h.peer.HoldPost(1)
	m.SendDelta(ctx, delta(dm, "t1", "Hello"))
	<-held // the first post is on its way, unanswered
	start := time.Now()
	for _, d := range []string{", wor", "ld", "!"} {
		m.SendDelta(ctx, delta(dm, "t1", d))
	}
	require.Less(t, time.Since(start), 200*time.Millisecond, "SendDelta never waits on Discord")
	h.peer.Release()
	require.Eventually(t, func() bool {
		msgs := h.peer.Messages(dm)
		return len(msgs) == 1 && msgs[0].Content == "Hello, world!" && msgs[0].Edits == 1
	}, 10*time.Second, 10*time.Millisecond, "the stream edits the message it posted")
	require.Equal(t, "1300000000000000004", h.peer.Messages(dm)[0].ReplyTo)

	m.SendDelta(ctx, delta(dm, "t1", " More."))
	m.SendDelta(ctx, end(dm, "t1"))
	require.NoError(t, m.Send(ctx, reply(dm, "1300000000000000004", "t1", "Hello, world! More.")))
	msgs := h.peer.Messages(dm)
	require.Len(t, msgs, 1, "the answer edits the streamed message instead of posting a new one")
	require.Equal(t, "Hello, world! More.", msgs[0].Content)
	require.Equal(t, 1, h.peer.CallsTo("POST", "/channels/"+dm+"/messages"))
}

func TestStreamEditsAreSpaced(t *testing.T) {
	h := startHarness(t, nil)
	m := manage(t, h)
	h.Ch.streamEvery = time.Hour // no edit is due until the call ends
	ctx := context.Background()
	m.SendDelta(ctx, delta(dm, "t1", "one"))
	require.Eventually(t, func() bool { return len(h.peer.Messages(dm)) == 1 }, 10*time.Second, 10*time.Millisecond)
	for _, d := range []string{" two", " three", " four"} {
		m.SendDelta(ctx, delta(dm, "t1", d))
	}
	h.sync() // time for a painter that does not wait to have edited
	require.Equal(t, 0, h.peer.CallsTo("PATCH", "/channels/"+dm+"/messages/"), "no edit before the interval")
	m.SendDelta(ctx, end(dm, "t1"))
	require.Eventually(t, func() bool {
		msgs := h.peer.Messages(dm)
		return len(msgs) == 1 && msgs[0].Content == "one two three four"
	}, 10*time.Second, 10*time.Millisecond, "the end of the call is drawn at once")
	require.Equal(t, 1, h.peer.CallsTo("PATCH", "/channels/"+dm+"/messages/"))
}

func TestLongStreamIsCutAndTheAnswerSplits(t *testing.T) {
	h := startHarness(t, nil)
	m := manage(t, h)
	ctx := context.Background()
	text := strings.Repeat("word ", 900) // 4500 characters
	m.SendDelta(ctx, delta(dm, "t1", text))
	require.Eventually(t, func() bool { return len(h.peer.Messages(dm)) == 1 }, 10*time.Second, 10*time.Millisecond)
	require.Equal(t, maxMessageRunes, utf8.RuneCountInString(h.peer.Messages(dm)[0].Content), "the preview is cut at Discord's limit")
	m.SendDelta(ctx, end(dm, "t1"))
	require.NoError(t, m.Send(ctx, reply(dm, "1300000000000000004", "t1", text)))
	msgs := h.peer.Messages(dm)
	require.Len(t, msgs, 3, "the streamed message becomes part 1, parts 2 and 3 are posted")
	var joined []string
	for _, m := range msgs {
		joined = append(joined, m.Content)
	}
	require.Equal(t, strings.Fields(text), strings.Fields(strings.Join(joined, " ")))
}

func TestStreamingOffPostsTheAnswerOnce(t *testing.T) {
	h := startHarness(t, map[string]any{"streaming": false})
	m := manage(t, h)
	ctx := context.Background()
	m.SendDelta(ctx, delta(dm, "t1", "partial"))
	m.SendDelta(ctx, end(dm, "t1"))
	require.NoError(t, m.Send(ctx, reply(dm, "", "t1", "The answer.")))
	msgs := h.peer.Messages(dm)
	require.Len(t, msgs, 1)
	require.Equal(t, "The answer.", msgs[0].Content)
	require.Equal(t, 0, msgs[0].Edits)
}

func TestStreamedMessageGoneIsPostedAnew(t *testing.T) {
	h := startHarness(t, nil)
	m := manage(t, h)
	ctx := context.Background()
	m.SendDelta(ctx, delta(dm, "t1", "draft"))
	require.Eventually(t, func() bool { return len(h.peer.Messages(dm)) == 1 }, 10*time.Second, 10*time.Millisecond)
	m.SendDelta(ctx, end(dm, "t1"))
	h.peer.Fail("PATCH", "/channels/"+dm+"/messages/", 404, `{"message":"Unknown Message","code":10008}`)
	require.NoError(t, m.Send(ctx, reply(dm, "", "t1", "The answer.")))
	msgs := h.peer.Messages(dm)
	require.Len(t, msgs, 2)
	require.Equal(t, "The answer.", msgs[1].Content)
}

func TestStreamedTurnAnswersTheUserOnce(t *testing.T) {
	h := startHarness(t, nil)
	m := manage(t, h)
	ctx := context.Background()
	hint := delta(dm, "t1", "")
	hint.ToolHint = "read_file README.md"
	m.SendDelta(ctx, hint)
	require.Eventually(t, func() bool { return len(h.peer.Messages(dm)) == 1 }, 10*time.Second, 10*time.Millisecond)
	text := delta(dm, "t1", "It says hello.")
	text.Iteration = 2
	m.SendDelta(ctx, text)
	text.Delta, text.End = "", true
	m.SendDelta(ctx, text)
	require.NoError(t, m.Send(ctx, reply(dm, "1300000000000000004", "t1", "It says hello.")))
	msgs := h.peer.Messages(dm)
	require.Len(t, msgs, 2)
	require.Equal(t, "-# ↳ read_file README.md", msgs[0].Content)
	require.Empty(t, msgs[0].ReplyTo, "a tool's hint answers nobody")
	require.Equal(t, "It says hello.", msgs[1].Content)
	require.Equal(t, "1300000000000000004", msgs[1].ReplyTo, "the turn's first text answers the user's, drawn or not")
}
