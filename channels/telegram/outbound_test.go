package telegram

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
)

func paragraphs(n, size int) string {
	var parts []string
	for i := 0; i < n; i++ {
		parts = append(parts, string(rune('a'+i))+strings.Repeat(" word", size/5))
	}
	return strings.Join(parts, "\n\n")
}

// TestSendRetryShowsEachPieceOnce: a 429 on the second piece returns
// Telegram's retry_after; the retried delivery sends only what was
// missing, and one more retry sends nothing.
func TestSendRetryShowsEachPieceOnce(t *testing.T) {
	f := newFakeAPI(t)
	f.answer = func(c call, n int) (int, string, bool) {
		if c.Method == "sendMessage" && n == 2 {
			return 429, `{"ok":false,"error_code":429,"description":"Too Many Requests: retry after 7","parameters":{"retry_after":7}}`, true
		}
		return 0, "", false
	}
	c := startChannel(t, f, nil)
	r := channels.Reply{Route: dm, Turn: "turn-1", Text: paragraphs(3, 3000)}
	// The delivery activity's heartbeat details, as each attempt finds them.
	var progress channels.Progress
	attempt := func() context.Context {
		return channels.WithProgress(context.Background(), progress, func(p channels.Progress) error { progress = p; return nil })
	}
	err := channels.Deliver(attempt(), c, r)
	var se *channels.SendError
	require.ErrorAs(t, err, &se)
	require.Equal(t, 7*time.Second, se.RetryAfter)
	require.False(t, se.Permanent)
	require.Equal(t, 1, progress.Sent)

	require.NoError(t, channels.Deliver(attempt(), c, r))
	require.NoError(t, channels.Deliver(attempt(), c, r), "a third attempt shows nothing")
	require.Equal(t, 3, progress.Sent)
	require.Len(t, progress.IDs, 3, "each part's Telegram message id")
	sent := f.sent("sendMessage")
	require.Len(t, sent, 4, "piece 1, piece 2 refused, piece 2, piece 3")
	require.True(t, strings.HasPrefix(sent[0].Form["text"], "a word"))
	require.True(t, strings.HasPrefix(sent[2].Form["text"], "b word"))
	require.True(t, strings.HasPrefix(sent[3].Form["text"], "c word"))
	for _, s := range sent {
		require.LessOrEqual(t, len([]rune(s.Form["text"])), 4096)
		require.Equal(t, "HTML", s.Form["parse_mode"])
		require.Equal(t, "42", s.Form["chat_id"])
	}

	other := r
	other.Turn = "turn-2"
	require.NoError(t, channels.Deliver(context.Background(), c, other))
	require.Len(t, f.sent("sendMessage"), 7, "another turn's reply is its own")
}

func TestSendFallsBackToPlainTextWhenHTMLIsRefused(t *testing.T) {
	f := newFakeAPI(t)
	f.answer = func(c call, n int) (int, string, bool) {
		if c.Method == "sendMessage" && c.Form["parse_mode"] == "HTML" {
			return 400, `{"ok":false,"error_code":400,"description":"Bad Request: can't parse entities: unsupported start tag \"x\""}`, true
		}
		return 0, "", false
	}
	c := startChannel(t, f, nil)
	require.NoError(t, channels.Deliver(context.Background(), c, channels.Reply{Route: dm, Turn: "t", Text: "**bold** <x>"}))
	sent := f.sent("sendMessage")
	require.Len(t, sent, 2)
	require.Equal(t, "<b>bold</b> &lt;x&gt;", sent[0].Form["text"])
	require.Equal(t, "**bold** <x>", sent[1].Form["text"], "the Markdown as written")
	require.Empty(t, sent[1].Form["parse_mode"])
}

func TestSendPermanentRefusals(t *testing.T) {
	for _, refusal := range []string{
		`{"ok":false,"error_code":403,"description":"Forbidden: bot was blocked by the user"}`,
		`{"ok":false,"error_code":400,"description":"Bad Request: chat not found"}`,
	} {
		f := newFakeAPI(t)
		f.answer = func(c call, n int) (int, string, bool) {
			if c.Method == "sendMessage" {
				return 400, refusal, true
			}
			return 0, "", false
		}
		c := startChannel(t, f, nil)
		err := channels.Deliver(context.Background(), c, channels.Reply{Route: dm, Turn: "t", Text: "hi"})
		var se *channels.SendError
		require.ErrorAs(t, err, &se, refusal)
		require.True(t, se.Permanent, refusal)
	}
}

func TestSendReplyToAndTopic(t *testing.T) {
	f := newFakeAPI(t)
	c := startChannel(t, f, func(cfg *config.Config) { editBlock(t, cfg, func(b *Config) { b.ReplyToMessage = true }) })
	route := dm
	route.ReplyTo, route.ThreadID = "5", "77"
	require.NoError(t, channels.Deliver(context.Background(), c, channels.Reply{Route: route, Turn: "t", Text: "hi"}))
	sent := f.sent("sendMessage")
	require.Len(t, sent, 1)
	require.Equal(t, "77", sent[0].Form["message_thread_id"])
	require.JSONEq(t, `{"message_id":5,"allow_sending_without_reply":true}`, sent[0].Form["reply_parameters"])
}

// TestUnsupportedMethodIsLoggedNotFatal: a server answering sendChatAction
// with HTTP 500 {"message":…} (telegram-test-api) gets its words reported,
// and the reply still goes out.
func TestUnsupportedMethodIsLoggedNotFatal(t *testing.T) {
	f := newFakeAPI(t)
	f.answer = func(c call, n int) (int, string, bool) {
		if c.Method == "sendChatAction" || c.Method == "setMessageReaction" {
			return 500, `{"message":"API method '` + c.Method + `' is not supported."}`, true
		}
		return 0, "", false
	}
	c := startChannel(t, f, nil)
	_, err := c.bot.SendChatAction(context.Background(), &bot.SendChatActionParams{ChatID: "42", Action: models.ChatActionTyping})
	require.ErrorContains(t, err, "API method 'sendChatAction' is not supported.")

	require.ErrorContains(t, c.SendTyping(context.Background(), dm), "is not supported")
	require.ErrorContains(t, c.React(context.Background(), dm, "5", "👀"), "is not supported")
	require.NoError(t, channels.Deliver(context.Background(), c, channels.Reply{Route: dm, Turn: "t", Text: "still here"}))
	require.Len(t, f.sent("sendMessage"), 1)
}

func TestPollingIsPaced(t *testing.T) {
	f := newFakeAPI(t)
	startChannel(t, f, nil)
	time.Sleep(1200 * time.Millisecond)
	n := len(f.sent("getUpdates"))
	require.GreaterOrEqual(t, n, 2)
	require.LessOrEqual(t, n, 4, "a server that answers getUpdates at once gets about two calls a second")
}

// TestSendMedia: a workspace image goes as an uploaded photo, another file
// as a document, before the text; a file the server refuses becomes a
// "[Failed to send: name]" line and the reply still goes out.
func TestSendMedia(t *testing.T) {
	f := newFakeAPI(t)
	f.answer = func(c call, n int) (int, string, bool) {
		if c.Method == "sendDocument" {
			return 500, `{"message":"API method 'sendDocument' is not supported."}`, true
		}
		return 0, "", false
	}
	c := startChannel(t, f, nil)
	require.NoError(t, os.WriteFile(filepath.Join(c.workspace, "chart.png"), []byte("png"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(c.workspace, "report.pdf"), []byte("pdf"), 0o644))
	r := channels.Reply{Route: dm, Turn: "t", Text: "Here you go.", Media: []string{"chart.png", filepath.Join(c.workspace, "report.pdf")}}
	require.NoError(t, channels.Deliver(context.Background(), c, r))

	photos := f.sent("sendPhoto")
	require.Len(t, photos, 1)
	require.Equal(t, "upload:chart.png", photos[0].Form["photo"])
	require.Equal(t, "42", photos[0].Form["chat_id"])
	require.Len(t, f.sent("sendDocument"), 1)
	texts := f.sent("sendMessage")
	require.Len(t, texts, 2)
	require.Equal(t, "[Failed to send: report.pdf]", texts[0].Form["text"])
	require.Equal(t, "Here you go.", texts[1].Form["text"])
}
