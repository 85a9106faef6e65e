package weixin

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/weixin/weixinpeer"
	"github.com/nanobot-durable/nanobot/protocol"
)

// TestDMInAndAnswered: a DM becomes an inbound message of the user's chat;
// the answer goes back as plain text with the user's context token.
func TestDMInAndAnswered(t *testing.T) {
	h := startHarness(t, nil)
	id := h.peer.Say(weixinpeer.Message{From: alice, Text: "hello bot"})
	got := h.WaitPublished(1)[0]
	require.Equal(t, "weixin:"+id, got.ID)
	require.Equal(t, protocol.Route{Channel: Name, ChatID: alice, SenderID: alice, ReplyTo: id}, got.Route)
	require.Equal(t, "hello bot", got.Content)
	require.False(t, got.Group)
	require.True(t, h.Ch.Connected())

	require.NoError(t, channels.Deliver(context.Background(), h.Ch, reply(alice, "t1", "Hello, **Alice**. See [docs](https://example.org).")))
	sent := h.peer.Sent(alice)
	require.Len(t, sent, 1)
	require.Equal(t, "Hello, Alice. See docs (https://example.org).", sent[0].Text, "WeChat shows no Markdown")
	require.Equal(t, "ctx-"+alice, sent[0].ContextToken)
	require.True(t, strings.HasPrefix(sent[0].ClientID, "nanobot-"))
}

// TestGroupMessageIsGroup: a @chatroom sender is a group, as in nanobot.
func TestGroupMessageIsGroup(t *testing.T) {
	h := startHarness(t, nil)
	h.peer.Say(weixinpeer.Message{From: room, Text: "hi all"})
	got := h.WaitPublished(1)[0]
	require.True(t, got.Group)
	require.Equal(t, room, got.Route.ChatID)
}

// TestRefusedSenderNotRepeated: a refused sender is dropped once, not retried.
func TestRefusedSenderNotRepeated(t *testing.T) {
	h := startHarness(t, nil)
	h.Refuse("mallory@im.wechat")
	h.peer.Say(weixinpeer.Message{From: "mallory@im.wechat", Text: "let me in"})
	h.sync()
	require.Len(t, h.Published(), 1, "only the sync message")
}

// TestOwnAndBrokenMessagesDropped: the bot's echo is skipped, a broken
// message is logged with its id and dropped; the poll goes on.
func TestOwnAndBrokenMessagesDropped(t *testing.T) {
	h := startHarness(t, nil)
	h.peer.Say(weixinpeer.Message{From: alice, Text: "my own", MessageType: 2})
	h.peer.Raw(`{"message_id": 4242, "from_user_id": "alice@im.wechat", "item_list": "not a list"}`)
	h.peer.Raw(`{"message_id": 4343, "item_list": []}`)
	got := h.sync()
	require.Equal(t, "sync", got.Content)
	require.Len(t, h.Published(), 1)
	require.Contains(t, h.Logs.String(), "message_id=4242")
	require.Contains(t, h.Logs.String(), "weixin message dropped: no sender")
}

// TestQuoteAndVoiceText: a quoted text and a transcribed voice read as nanobot writes them.
func TestQuoteAndVoiceText(t *testing.T) {
	h := startHarness(t, nil)
	h.peer.Say(weixinpeer.Message{From: alice, Items: []map[string]any{
		{"type": 1, "text_item": map[string]any{"text": "agreed"},
			"ref_msg": map[string]any{"title": "Bob", "message_item": map[string]any{"type": 1, "text_item": map[string]any{"text": "lunch?"}}}},
		{"type": 3, "voice_item": map[string]any{"text": "see you at noon"}},
	}})
	got := h.WaitPublished(1)[0]
	require.Equal(t, "[引用: Bob | lunch?]\nagreed\n[voice] see you at noon", got.Content)
}

// TestImageInDecrypted: an image is fetched from the CDN, AES-decrypted
// and saved in the workspace after admission.
func TestImageInDecrypted(t *testing.T) {
	h := startHarness(t, nil)
	png := []byte("\x89PNG\r\n\x1a\nnot really a picture, but 33 bytes+")
	h.peer.Say(weixinpeer.Message{From: alice, Items: []map[string]any{h.peer.Image(png),
		{"type": 1, "text_item": map[string]any{"text": "look"}}}})
	got := h.WaitPublished(1)[0]
	require.Equal(t, "[image]\nlook", got.Content)
	requireMedia(t, got, png)
	require.True(t, strings.HasPrefix(got.Media[0], h.Workspace))
}

// TestLongAnswerSplitAtLimit: an answer over 1800 runes goes as several messages.
func TestLongAnswerSplitAtLimit(t *testing.T) {
	h := startHarness(t, nil)
	h.peer.Say(weixinpeer.Message{From: alice, Text: "tell me"})
	h.WaitPublished(1)
	long := strings.Repeat("微信 message text. ", 300)
	require.NoError(t, channels.Deliver(context.Background(), h.Ch, reply(alice, "t2", long)))
	sent := h.peer.Sent(alice)
	require.Greater(t, len(sent), 1)
	var joined []string
	for _, s := range sent {
		require.LessOrEqual(t, utf8.RuneCountInString(s.Text), maxMessageRunes)
		joined = append(joined, s.Text)
	}
	require.Equal(t, strings.Fields(long), strings.Fields(strings.Join(joined, " ")), "nothing lost in the split")
	require.NotEqual(t, sent[0].ClientID, sent[1].ClientID, "each part has its own client id")
}

// TestSendErrors: 429 is retried later; no context token and a used-up
// context token are permanent.
func TestSendErrors(t *testing.T) {
	h := startHarness(t, nil)
	var se *channels.SendError
	err := channels.Deliver(context.Background(), h.Ch, reply("stranger@im.wechat", "t3", "hi"))
	require.ErrorAs(t, err, &se)
	require.True(t, se.Permanent, "nobody to answer without a context token")

	h.peer.Say(weixinpeer.Message{From: alice, Text: "hi"})
	h.WaitPublished(1)
	h.peer.Fail("sendmessage", 429)
	err = channels.Deliver(context.Background(), h.Ch, reply(alice, "t4", "hi"))
	require.ErrorAs(t, err, &se)
	require.Positive(t, se.RetryAfter)
	require.False(t, se.Permanent)
	require.NoError(t, channels.Deliver(context.Background(), h.Ch, reply(alice, "t4", "hi")), "the retry goes through")

	h.peer.Fail("sendmessage", 503)
	err = channels.Deliver(context.Background(), h.Ch, reply(alice, "t5", "hi"))
	require.ErrorAs(t, err, &se)
	require.False(t, se.Permanent, "a 5xx is retried")

	h.Ch.mu.Lock()
	h.Ch.acct.ContextTokens[alice] = "stale"
	h.Ch.mu.Unlock()
	err = channels.Deliver(context.Background(), h.Ch, reply(alice, "t6", "hi"))
	require.ErrorAs(t, err, &se)
	require.True(t, se.Permanent, "errcode -2: the user must write again")
}

// TestTyping: a ticket from getconfig, then sendtyping on; the answer cancels it.
func TestTyping(t *testing.T) {
	h := startHarness(t, nil)
	h.peer.Say(weixinpeer.Message{From: alice, Text: "hi"})
	h.WaitPublished(1)
	route := protocol.Route{Channel: Name, ChatID: alice}
	require.NoError(t, h.Ch.SendTyping(context.Background(), route))
	require.NoError(t, h.Ch.SendTyping(context.Background(), route))
	require.Equal(t, 1, h.peer.Calls("getconfig"), "the ticket is kept")
	require.NoError(t, channels.Deliver(context.Background(), h.Ch, reply(alice, "t7", "done")))
	typing := h.peer.Typing()
	require.Len(t, typing, 3)
	require.Equal(t, weixinpeer.Typing{User: alice, Ticket: "ticket-" + alice, Status: typingOn}, typing[0])
	require.Equal(t, typingCancel, typing[2].Status, "the answer clears typing")
}

// TestPollRecoversAfterFailures: failed polls back off and the channel
// comes back; Connected tells.
func TestPollRecoversAfterFailures(t *testing.T) {
	h := startHarness(t, nil)
	h.peer.Fail("getupdates", 500, 502, 500)
	require.Eventually(t, func() bool { return strings.Count(h.Logs.String(), "weixin poll failed") == 3 },
		5*time.Second, time.Millisecond, "each failed poll is logged and retried")
	require.Eventually(t, h.Ch.Connected, 5*time.Second, time.Millisecond, "the poll comes back")
	h.peer.Say(weixinpeer.Message{From: alice, Text: "still there?"})
	require.Equal(t, "still there?", h.WaitPublished(1)[0].Content)
}

// TestSessionExpiredReported: errcode -14 stops the polling (no loop of
// failures), says to run the login, fails sends permanently; a new login
// stored by `nanobot channels login weixin` is picked up.
func TestSessionExpiredReported(t *testing.T) {
	h := startHarness(t, nil)
	h.peer.Expire("fresh-token")
	require.Eventually(t, func() bool { return strings.Contains(h.Logs.String(), "nanobot channels login weixin") },
		5*time.Second, 10*time.Millisecond)
	require.False(t, h.Ch.Connected())
	polls := h.peer.Calls("getupdates")
	require.Never(t, func() bool { return h.peer.Calls("getupdates") > polls }, 300*time.Millisecond, 20*time.Millisecond,
		"an expired session does not keep polling")
	var se *channels.SendError
	err := channels.Deliver(context.Background(), h.Ch, reply(alice, "t8", "hi"))
	require.ErrorAs(t, err, &se)
	require.True(t, se.Permanent)
	require.Contains(t, se.Error(), "nanobot channels login weixin")

	require.NoError(t, saveAccount(h.dir, account{Token: "fresh-token", BaseURL: h.peer.URL()}))
	require.Eventually(t, h.Ch.Connected, 5*time.Second, 10*time.Millisecond, "the new login is used")
	h.peer.Say(weixinpeer.Message{From: alice, Text: "back"})
	require.Equal(t, "back", h.WaitPublished(1)[0].Content)
	require.False(t, errors.Is(err, context.Canceled))
}

// TestOldContextTokenRefreshed: a context token older than a minute (or
// read back from a previous run) is refreshed through getconfig first.
func TestOldContextTokenRefreshed(t *testing.T) {
	h := startHarness(t, nil)
	h.peer.Say(weixinpeer.Message{From: alice, Text: "hi"})
	h.WaitPublished(1)
	require.NoError(t, channels.Deliver(context.Background(), h.Ch, reply(alice, "t11", "fresh")))
	require.Equal(t, "ctx-"+alice, h.peer.Sent(alice)[0].ContextToken, "a fresh token is used as it is")
	require.Zero(t, h.peer.Calls("getconfig"))

	h.Ch.mu.Lock()
	h.Ch.tokenAt[alice] = time.Now().Add(-2 * time.Minute)
	h.Ch.mu.Unlock()
	require.NoError(t, channels.Deliver(context.Background(), h.Ch, reply(alice, "t12", "later")))
	require.Equal(t, "ctx-"+alice+"-refreshed", h.peer.Sent(alice)[1].ContextToken)
	a, err := loadAccount(h.dir)
	require.NoError(t, err)
	require.Equal(t, "ctx-"+alice+"-refreshed", a.ContextTokens[alice], "the refreshed token is stored")
}

// TestQuotedImageFetched: a text quoting an image brings the image along.
func TestQuotedImageFetched(t *testing.T) {
	h := startHarness(t, nil)
	img := []byte("the quoted picture's bytes")
	h.peer.Say(weixinpeer.Message{From: alice, Items: []map[string]any{
		{"type": 1, "text_item": map[string]any{"text": "what is this?"}, "ref_msg": map[string]any{"message_item": h.peer.Image(img)}},
	}})
	got := h.WaitPublished(1)[0]
	require.Equal(t, "what is this?", got.Content)
	requireMedia(t, got, img)
}
