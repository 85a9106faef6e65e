package wecom

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/wecom/wecompeer"
	"github.com/nanobot-durable/nanobot/protocol"
)

func TestDMIsPublished(t *testing.T) {
	h := startHarness(t, nil)
	_, id := h.peer.Say(wecompeer.Message{From: alice, Text: "hello there"})
	got := h.WaitPublished(1)[0]
	require.Equal(t, "wecom:"+id, got.ID)
	require.Equal(t, protocol.Route{Channel: Name, ChatID: alice, SenderID: alice, ReplyTo: id}, got.Route,
		"a DM's chat is its user")
	require.Equal(t, "hello there", got.Content)
	require.False(t, got.Group)
	require.Equal(t, map[string]string{channels.MetaMessageID: id, "msg_type": "text", "chat_type": "single"}, got.Metadata)
	require.Contains(t, h.Ch.Describe(), wecompeer.BotID)
}

func TestGroupMessageIsItsChat(t *testing.T) {
	h := startHarness(t, nil)
	req, _ := h.peer.Say(wecompeer.Message{From: alice, ChatID: team, Text: "just chatting"})
	require.Empty(t, req, "WeCom pushes no group message that does not mention the bot")
	_, id := h.peer.Say(wecompeer.Message{From: alice, ChatID: team, Text: wecompeer.Mention + " what is 2+2?"})
	got := h.WaitPublished(1)[0]
	require.Equal(t, "wecom:"+id, got.ID)
	require.True(t, got.Group)
	require.Equal(t, team, got.Route.ChatID, "a group's answer goes to the group")
	require.Equal(t, alice, got.Route.SenderID, "allowFrom is checked against the sender")
	require.Equal(t, "group", got.Metadata["chat_type"])
	require.Equal(t, wecompeer.Mention+" what is 2+2?", got.Content, "the text as WeCom gives it, as in nanobot")
}

func TestRefusedSenderIsNotTakenFurther(t *testing.T) {
	h := startHarness(t, nil)
	h.Refuse("bob")
	img := h.peer.AddFile("a.png", []byte("png"))
	h.peer.Say(wecompeer.Message{From: "bob", MsgType: "image", Image: img})
	h.sync()
	require.Len(t, h.Published(), 1, "only the sync message")
	entries, _ := os.ReadDir(filepath.Join(h.Workspace, "media"))
	require.Empty(t, entries, "nothing is downloaded for a refused sender")
}

func TestRedeliveredMessageIsTakenOnce(t *testing.T) {
	h := startHarness(t, nil)
	m := wecompeer.Message{From: alice, Text: "once"}
	_, id := h.peer.Say(m)
	h.peer.Redeliver(m, id)
	h.sync()
	require.Len(t, h.Published(), 2, "the message and the sync")
	require.Contains(t, h.Logs.String(), "redelivered")
}

func TestBadPayloadIsDroppedWithItsID(t *testing.T) {
	h := startHarness(t, nil)
	h.peer.Raw("not json at all")
	h.peer.Say(wecompeer.Message{Body: map[string]any{"msgid": "m-nobody", "msgtype": "text", "text": map[string]string{"content": "x"}}})
	h.peer.Say(wecompeer.Message{Body: "a string, not an object"})
	h.sync()
	require.Len(t, h.Published(), 1, "only the sync message")
	logs := h.Logs.String()
	require.Contains(t, logs, "wecom frame dropped")
	require.Contains(t, logs, "msgid=m-nobody")
	require.Contains(t, logs, "wecom callback dropped: bad body")
	require.True(t, h.Ch.Connected(), "a bad payload does not cost the connection")
}

func TestAnswerIsAFinishedStreamOnTheCallbacksReqID(t *testing.T) {
	h := startHarness(t, nil)
	req, _ := h.peer.Say(wecompeer.Message{From: alice, Text: "hi"})
	msg := h.WaitPublished(1)[0]
	require.NoError(t, channels.Deliver(context.Background(), h.Ch, answer(alice, msg.Route.ReplyTo, "t1", "Hello, **Alice** ~~not~~.")))
	replies := h.peer.Replies(req)
	require.Len(t, replies, 1)
	require.True(t, replies[0].Finish, "the stream is closed")
	require.NotEmpty(t, replies[0].ID)
	require.Equal(t, "Hello, **Alice** not.", replies[0].Content, "WeCom's Markdown")
	require.Empty(t, h.peer.Proactive(alice))
}

func TestLongAnswerIsSplitAtTheLimit(t *testing.T) {
	h := startHarness(t, nil)
	req, _ := h.peer.Say(wecompeer.Message{From: alice, Text: "tell me a lot"})
	msg := h.WaitPublished(1)[0]
	var paras []string
	for i := range 110 {
		paras = append(paras, strings.Repeat(string(rune('a'+i%26)), 99))
	}
	text := strings.Join(paras, "\n\n") // 110×99 + 109×2 = 11108 characters
	require.NoError(t, channels.Deliver(context.Background(), h.Ch, answer(alice, msg.Route.ReplyTo, "t1", text)))
	replies := h.peer.Replies(req)
	require.Len(t, replies, 3)
	var joined []string
	ids := map[string]bool{}
	for _, r := range replies {
		require.LessOrEqual(t, utf8.RuneCountInString(r.Content), maxRunes)
		require.True(t, r.Finish)
		ids[r.ID] = true
		joined = append(joined, r.Content)
	}
	require.Len(t, ids, 3, "each part is a stream of its own")
	require.Equal(t, text, strings.Join(joined, "\n\n"))
}

func TestWithoutACallbackTheReplyIsProactive(t *testing.T) {
	h := startHarness(t, nil)
	// A message tool send (no message to answer) to a group, long in Chinese: 4096 bytes a message.
	text := strings.Repeat("你好世界。", 400) // 6000 bytes
	r := channels.Reply{Route: protocol.Route{Channel: Name, ChatID: team}, Text: text, Kind: protocol.ReplyMessage}
	require.NoError(t, channels.Deliver(context.Background(), h.Ch, r))
	sent := h.peer.Proactive(team)
	require.Len(t, sent, 2)
	for _, s := range sent {
		require.LessOrEqual(t, len(s), maxProactiveSize)
	}
	require.Equal(t, text, strings.Join(sent, ""))
}

func TestExpiredCallbackFallsBackToProactive(t *testing.T) {
	h := startHarness(t, nil)
	req, _ := h.peer.Say(wecompeer.Message{From: alice, Text: "slow question"})
	msg := h.WaitPublished(1)[0]
	h.peer.FailNext("aibot_respond_msg", codeStreamExpired, "stream message update expired")
	require.NoError(t, channels.Deliver(context.Background(), h.Ch, answer(alice, msg.Route.ReplyTo, "t1", "late answer")))
	require.Len(t, h.peer.Replies(req), 1, "tried on the callback first")
	require.Equal(t, []string{"late answer"}, h.peer.Proactive(alice))
}

func TestSendErrors(t *testing.T) {
	h := startHarness(t, nil)
	r := channels.Reply{Route: protocol.Route{Channel: Name, ChatID: alice}, Text: "x", Kind: protocol.ReplyMessage}
	var se *channels.SendError

	h.peer.FailNext("aibot_send_msg", codeFreqLimit, "api freq out of limit")
	err := channels.Deliver(context.Background(), h.Ch, r)
	require.ErrorAs(t, err, &se)
	require.Positive(t, se.RetryAfter, "the frequency limit waits")
	require.False(t, se.Permanent)

	h.peer.FailNext("aibot_send_msg", 40008, "invalid message type")
	err = channels.Deliver(context.Background(), h.Ch, r)
	require.ErrorAs(t, err, &se)
	require.True(t, se.Permanent, "a refusal is final")

	h.peer.FailNext("aibot_send_msg", codeBusy, "system busy")
	err = channels.Deliver(context.Background(), h.Ch, r)
	require.Error(t, err)
	require.NotErrorAs(t, err, &se, "system busy is retried with backoff")

	require.NoError(t, channels.Deliver(context.Background(), h.Ch, r))
	require.Len(t, h.peer.Proactive(alice), 4, "three refused, the last taken")
}
