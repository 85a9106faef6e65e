package telegram

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
)

func ev(turn string, iter int) channels.StreamEvent {
	return channels.StreamEvent{SessionKey: "telegram:42", Route: dm, Turn: turn, Iteration: iter}
}

func eventually(t *testing.T, cond func() bool, msg string) {
	t.Helper()
	require.Eventually(t, cond, 5*time.Second, 5*time.Millisecond, msg)
}

// TestStreamDrawsThenFinalReplyEditsIt: the first delta sends a message,
// later ones edit it (plain text while streaming), the end of the model
// call renders it as HTML, and the final reply of that turn is that
// message: no second message.
func TestStreamDrawsThenFinalReplyEditsIt(t *testing.T) {
	f := newFakeAPI(t)
	c := startChannel(t, f, nil)
	e := ev("turn-1", 1)

	e.Delta = "Hello "
	c.SendDelta(context.Background(), e)
	eventually(t, func() bool { return len(f.sent("sendMessage")) == 1 }, "first delta sends")
	first := f.sent("sendMessage")[0]
	require.Equal(t, "Hello", first.Form["text"])
	require.Empty(t, first.Form["parse_mode"], "half-written Markdown is drawn as plain text")

	e.Delta = "**world**"
	c.SendDelta(context.Background(), e)
	eventually(t, func() bool { return len(f.sent("editMessageText")) == 1 }, "a later delta edits")
	require.Equal(t, "Hello **world**", f.sent("editMessageText")[0].Form["text"])

	end := ev("turn-1", 1)
	end.End = true
	c.SendDelta(context.Background(), end)
	eventually(t, func() bool { return len(f.sent("editMessageText")) == 2 }, "the end renders HTML")
	final := f.sent("editMessageText")[1]
	require.Equal(t, "Hello <b>world</b>", final.Form["text"])
	require.Equal(t, "HTML", final.Form["parse_mode"])

	require.NoError(t, c.Send(context.Background(), channels.Reply{Route: dm, Turn: "turn-1", Text: "Hello **world**"}))
	require.Len(t, f.sent("sendMessage"), 1, "the streamed message is the reply")
	require.Len(t, f.sent("editMessageText"), 2, "it already shows the final text")
	require.Equal(t, first.Form["chat_id"], final.Form["chat_id"])
}

// TestStreamResetAndToolHint: a retried model call draws over the same
// message; a tool hint is its own collapsed quote; the final reply edits
// the last model call's message even when its text differs.
func TestStreamResetAndToolHint(t *testing.T) {
	f := newFakeAPI(t)
	c := startChannel(t, f, nil)

	e := ev("turn-2", 1)
	e.Delta = "Let me look"
	c.SendDelta(context.Background(), e)
	e.Delta, e.End = "", true
	c.SendDelta(context.Background(), e)
	hint := ev("turn-2", 1)
	hint.ToolHint = "read_file a<b>.md"
	c.SendDelta(context.Background(), hint)
	eventually(t, func() bool { return len(f.sent("sendMessage")) == 2 }, "text, then the hint")
	require.Equal(t, "<blockquote expandable>↳ read_file a&lt;b&gt;.md</blockquote>", f.sent("sendMessage")[1].Form["text"])

	e2 := ev("turn-2", 2)
	e2.Delta = "wrong start"
	c.SendDelta(context.Background(), e2)
	eventually(t, func() bool { return len(f.sent("sendMessage")) == 3 }, "second model call, new message")
	reset := ev("turn-2", 2)
	reset.Reset = true
	c.SendDelta(context.Background(), reset)
	e2.Delta = "It says hi"
	c.SendDelta(context.Background(), e2)
	eventually(t, func() bool {
		edits := f.sent("editMessageText")
		return len(edits) > 0 && edits[len(edits)-1].Form["text"] == "It says hi"
	}, "the retry draws over the same message")

	require.NoError(t, c.Send(context.Background(), channels.Reply{Route: dm, Turn: "turn-2", Text: "It says _hi_."}))
	require.Len(t, f.sent("sendMessage"), 3, "no new message for the final reply")
	edits := f.sent("editMessageText")
	last := edits[len(edits)-1]
	require.Equal(t, "It says <i>hi</i>.", last.Form["text"])
	require.Equal(t, f.sent("sendMessage")[2].Form["chat_id"], last.Form["chat_id"])
}

func TestToolHintsOffAndStreamingOff(t *testing.T) {
	f := newFakeAPI(t)
	c := startChannel(t, f, nil)
	c.shared.SendToolHints = false
	c.cfg.Streaming = false
	hint := ev("turn-3", 1)
	hint.ToolHint = "exec ls"
	c.SendDelta(context.Background(), hint)
	e := ev("turn-3", 1)
	e.Delta = "streamed"
	c.SendDelta(context.Background(), e)
	require.NoError(t, c.Send(context.Background(), channels.Reply{Route: dm, Turn: "turn-3", Text: "whole"}))
	sent := f.sent("sendMessage")
	require.Len(t, sent, 1, "only the final reply")
	require.Equal(t, "whole", sent[0].Form["text"])
}

// TestFinalReplyAfterAToolHintIsANewMessage: when the last thing drawn is
// a tool hint (the final model call streamed nothing), the text drawn
// before it stays and the reply comes as a new message below the hint.
func TestFinalReplyAfterAToolHintIsANewMessage(t *testing.T) {
	f := newFakeAPI(t)
	c := startChannel(t, f, nil)
	e := ev("turn-4", 1)
	e.Delta = "Let me check."
	c.SendDelta(context.Background(), e)
	hint := ev("turn-4", 1)
	hint.ToolHint = "exec ls"
	c.SendDelta(context.Background(), hint)
	eventually(t, func() bool { return len(f.sent("sendMessage")) == 2 }, "text and hint drawn")
	require.NoError(t, c.Send(context.Background(), channels.Reply{Route: dm, Turn: "turn-4", Text: "Two files."}))
	sent := f.sent("sendMessage")
	require.Len(t, sent, 3)
	require.Equal(t, "Two files.", sent[2].Form["text"])
	for _, e := range f.sent("editMessageText") {
		require.NotEqual(t, "Two files.", e.Form["text"], "the drawn text is not overwritten")
	}
}
