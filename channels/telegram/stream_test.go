package telegram

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/channeltest"
	"github.com/nanobot-durable/nanobot/config"
)

func ev(turn string, iter int) channels.StreamEvent {
	return channels.StreamEvent{SessionKey: "telegram:42", Route: dm, Turn: turn, Iteration: iter}
}

func eventually(t *testing.T, cond func() bool, msg string) {
	t.Helper()
	require.Eventually(t, cond, 5*time.Second, 5*time.Millisecond, msg)
}

// streaming starts the channel under a manager, which draws its streams
// as a gateway does; edit changes the config of both.
func streaming(t *testing.T, f *fakeAPI, edit func(*config.Config)) channeltest.Managed {
	var cfg *config.Config
	c := startChannel(t, f, func(c *config.Config) {
		if edit != nil {
			edit(c)
		}
		cfg = c
	})
	return channeltest.Manage(t, cfg, c)
}

// TestStreamDrawsThenFinalReplyEditsIt: the first delta sends a message,
// later ones edit it (as HTML), and the final reply of that turn is that
// message: no second message.
func TestStreamDrawsThenFinalReplyEditsIt(t *testing.T) {
	f := newFakeAPI(t)
	m := streaming(t, f, nil)
	e := ev("turn-1", 1)

	e.Delta = "Hello "
	m.SendDelta(context.Background(), e)
	eventually(t, func() bool { return len(f.sent("sendMessage")) == 1 }, "first delta sends")
	first := f.sent("sendMessage")[0]
	require.Equal(t, "Hello", first.Form["text"])

	e.Delta = "**world**"
	m.SendDelta(context.Background(), e)
	eventually(t, func() bool { return len(f.sent("editMessageText")) == 1 }, "a later delta edits")
	edit := f.sent("editMessageText")[0]
	require.Equal(t, "Hello <b>world</b>", edit.Form["text"])
	require.Equal(t, "HTML", edit.Form["parse_mode"])

	end := ev("turn-1", 1)
	end.End = true
	m.SendDelta(context.Background(), end)
	require.NoError(t, m.Send(context.Background(), channels.Reply{Route: dm, Turn: "turn-1", Text: "Hello **world**"}))
	require.Len(t, f.sent("sendMessage"), 1, "the streamed message is the reply")
	require.Len(t, f.sent("editMessageText"), 1, "it already shows the final text")
	require.Equal(t, first.Form["chat_id"], edit.Form["chat_id"])
}

// TestStreamResetAndToolHint: a retried model call draws over the same
// message; a tool hint is its own collapsed quote; the final reply edits
// the last model call's message even when its text differs.
func TestStreamResetAndToolHint(t *testing.T) {
	f := newFakeAPI(t)
	m := streaming(t, f, nil)

	e := ev("turn-2", 1)
	e.Delta = "Let me look"
	m.SendDelta(context.Background(), e)
	e.Delta, e.End = "", true
	m.SendDelta(context.Background(), e)
	hint := ev("turn-2", 1)
	hint.ToolHint = "read_file a<b>.md"
	m.SendDelta(context.Background(), hint)
	eventually(t, func() bool { return len(f.sent("sendMessage")) == 2 }, "text, then the hint")
	require.Equal(t, "<blockquote expandable>↳ read_file a&lt;b&gt;.md</blockquote>", f.sent("sendMessage")[1].Form["text"])
	require.Equal(t, "HTML", f.sent("sendMessage")[1].Form["parse_mode"])

	e2 := ev("turn-2", 2)
	e2.Delta = "wrong start"
	m.SendDelta(context.Background(), e2)
	eventually(t, func() bool { return len(f.sent("sendMessage")) == 3 }, "second model call, new message")
	reset := ev("turn-2", 2)
	reset.Reset = true
	m.SendDelta(context.Background(), reset)
	e2.Delta = "It says hi"
	m.SendDelta(context.Background(), e2)
	eventually(t, func() bool {
		edits := f.sent("editMessageText")
		return len(edits) > 0 && edits[len(edits)-1].Form["text"] == "It says hi"
	}, "the retry draws over the same message")

	require.NoError(t, m.Send(context.Background(), channels.Reply{Route: dm, Turn: "turn-2", Text: "It says _hi_."}))
	require.Len(t, f.sent("sendMessage"), 3, "no new message for the final reply")
	edits := f.sent("editMessageText")
	last := edits[len(edits)-1]
	require.Equal(t, "It says <i>hi</i>.", last.Form["text"])
	require.Equal(t, f.sent("sendMessage")[2].Form["chat_id"], last.Form["chat_id"])
}

// TestWhatIsDrawnFollowsTheSettings: a turn says "Let me look.", runs a
// tool, then answers. channels.sendProgress off draws none of the model's
// text (the answer arrives whole), sendToolHints off no hint, streaming
// off nothing at all.
func TestWhatIsDrawnFollowsTheSettings(t *testing.T) {
	hint := "sendMessage: <blockquote expandable>↳ exec ls</blockquote>"
	for name, tc := range map[string]struct {
		edit func(*config.Config)
		want []string
	}{
		"default":          {nil, []string{"sendMessage: Let me look.", hint, "sendMessage: Two files", "editMessageText: Two files."}},
		"sendProgress off": {func(c *config.Config) { c.Channels.SendProgress = false }, []string{hint, "sendMessage: Two files."}},
		"sendToolHints off": {func(c *config.Config) { c.Channels.SendToolHints = false },
			[]string{"sendMessage: Let me look.", "sendMessage: Two files", "editMessageText: Two files."}},
		"streaming off": {func(c *config.Config) { editBlock(t, c, func(b *Config) { b.Streaming = false }) }, []string{"sendMessage: Two files."}},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFakeAPI(t)
			m := streaming(t, f, tc.edit)
			for _, e := range []channels.StreamEvent{{Delta: "Let me look."}, {ToolHint: "exec ls"}, {Iteration: 2, Delta: "Two files"}} {
				e.SessionKey, e.Route, e.Turn = "telegram:42", dm, "turn-5"
				e.Iteration = max(e.Iteration, 1)
				m.SendDelta(context.Background(), e)
			}
			require.NoError(t, m.Send(context.Background(), channels.Reply{Route: dm, Turn: "turn-5", Text: "Two files."}))
			var got []string
			for _, s := range f.sent("sendMessage", "editMessageText") {
				got = append(got, s.Method+": "+s.Form["text"])
			}
			require.Equal(t, tc.want, got)
		})
	}
}

// TestFinalReplyAfterAToolHintIsANewMessage: when the last thing drawn is
// a tool hint (the final model call streamed nothing), the text drawn
// before it stays and the reply comes as a new message below the hint.
func TestFinalReplyAfterAToolHintIsANewMessage(t *testing.T) {
	f := newFakeAPI(t)
	m := streaming(t, f, nil)
	e := ev("turn-4", 1)
	e.Delta = "Let me check."
	m.SendDelta(context.Background(), e)
	hint := ev("turn-4", 1)
	hint.ToolHint = "exec ls"
	m.SendDelta(context.Background(), hint)
	eventually(t, func() bool { return len(f.sent("sendMessage")) == 2 }, "text and hint drawn")
	require.NoError(t, m.Send(context.Background(), channels.Reply{Route: dm, Turn: "turn-4", Text: "Two files."}))
	sent := f.sent("sendMessage")
	require.Len(t, sent, 3)
	require.Equal(t, "Two files.", sent[2].Form["text"])
	for _, e := range f.sent("editMessageText") {
		require.NotEqual(t, "Two files.", e.Form["text"], "the drawn text is not overwritten")
	}
}
