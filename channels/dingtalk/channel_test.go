package dingtalk

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/dingtalk/dingtalkpeer"
	"github.com/nanobot-durable/nanobot/protocol"
)

func TestStreamRegistersAndAcksTheMessage(t *testing.T) {
	h := startHarness(t, nil)
	require.Equal(t, []map[string]string{{"type": "CALLBACK", "topic": "/v1.0/im/bot/messages/get"}}, h.peer.Subscriptions())
	id := h.peer.Say(dingtalkpeer.Incoming{From: alice, Text: " hello there "})
	got := h.WaitPublished(1)[0]
	require.Equal(t, "dingtalk:"+id, got.ID)
	require.Equal(t, protocol.Route{Channel: Name, ChatID: alice.StaffID, SenderID: alice.StaffID, ReplyTo: id}, got.Route)
	require.Equal(t, "hello there", got.Content)
	require.False(t, got.Group)
	require.Nil(t, got.Scope, "a DM has the chat's session (the manager names it)")
	require.Equal(t, "Alice", got.Metadata["sender_name"])
	require.Equal(t, "1", got.Metadata["conversation_type"])

	// The callback frame was acknowledged: code 200, its messageId, {"response":…}.
	require.Eventually(t, func() bool { return len(h.peer.Responses()) == 1 }, 5*time.Second, 10*time.Millisecond)
	ack := h.peer.Responses()[0]
	require.Equal(t, 200, ack.Code)
	require.Equal(t, "OK", ack.Message)
	require.NotEmpty(t, ack.Headers["messageId"])
	require.Equal(t, "application/json", ack.Headers["contentType"])
	require.JSONEq(t, `{"response":{}}`, ack.Data)
}

func TestPingIsAnsweredWithItsData(t *testing.T) {
	h := startHarness(t, nil)
	id := h.peer.Ping(`{"opaque":"12345"}`)
	require.Eventually(t, func() bool { _, ok := h.peer.Answered(id); return ok }, 5*time.Second, 10*time.Millisecond)
	r, _ := h.peer.Answered(id)
	require.Equal(t, 200, r.Code)
	require.Equal(t, `{"opaque":"12345"}`, r.Data)
	require.Equal(t, "ping", r.Headers["topic"], "the ping's headers come back")
}

func TestGroupMessageNeedsAMention(t *testing.T) {
	h := startHarness(t, nil)
	h.peer.Say(dingtalkpeer.Incoming{From: alice, Group: team, Text: "just chatting"})
	id := h.peer.Say(dingtalkpeer.Incoming{From: alice, Group: team, AtRobot: true, Text: " what is 2+2?"})
	got := h.WaitPublished(1)[0]
	require.Equal(t, "dingtalk:"+id, got.ID, "the message without a mention was left alone")
	require.Equal(t, "what is 2+2?", got.Content)
	require.True(t, got.Group)
	require.Equal(t, "group:"+team, got.Route.ChatID)
	require.Equal(t, alice.StaffID, got.Route.SenderID)
	require.Nil(t, got.Scope, "the group shares one session (dingtalk:group:…)")
	require.Contains(t, h.Logs.String(), skipNotMentioned)
}

func TestGroupUserIsolation(t *testing.T) {
	h := startHarness(t, map[string]any{"groupUserIsolation": true})
	h.peer.Say(dingtalkpeer.Incoming{From: alice, Group: team, AtRobot: true, Text: "hi"})
	h.peer.Say(dingtalkpeer.Incoming{From: bob, Group: team, AtRobot: true, Text: "hi"})
	got := h.WaitPublished(2)
	require.Equal(t, protocol.Within(alice.StaffID), got[0].Scope, "each member has a session of the group's")
	require.Equal(t, protocol.Within(bob.StaffID), got[1].Scope)
	require.Equal(t, "group:"+team, got[1].Route.ChatID)
}

func TestRefusedSenderIsNotTakenFurther(t *testing.T) {
	h := startHarness(t, nil)
	h.Refuse(bob.StaffID)
	h.peer.AddFile("code-bob", []byte("png"))
	h.peer.Say(dingtalkpeer.Incoming{From: bob, MsgType: "picture", Content: map[string]any{"downloadCode": "code-bob"}})
	h.sync()
	require.Len(t, h.Published(), 1, "only the sync message")
	require.Zero(t, h.peer.Stats().Downloads, "nothing is downloaded for a refused sender")
	entries, _ := os.ReadDir(filepath.Join(h.Workspace, "media"))
	require.Empty(t, entries)
}

func TestPrivateChatDisabled(t *testing.T) {
	h := startHarness(t, map[string]any{"disablePrivateChat": true})
	h.peer.Say(dingtalkpeer.Incoming{From: alice, Text: "hello"})
	require.Eventually(t, func() bool { return len(h.peer.Sent(alice.StaffID)) == 1 }, 5*time.Second, 10*time.Millisecond)
	require.Equal(t, privateChatDisabled, h.peer.Sent(alice.StaffID)[0].Text)
	id := h.peer.Say(dingtalkpeer.Incoming{From: alice, Group: team, AtRobot: true, Text: "in the group"})
	require.Equal(t, "dingtalk:"+id, h.WaitPublished(1)[0].ID, "groups are not affected, and the DM never reached the agent")
}

func TestRichTextAndAudio(t *testing.T) {
	h := startHarness(t, nil)
	h.peer.Say(dingtalkpeer.Incoming{From: alice, MsgType: "richText", Content: map[string]any{"richText": []map[string]string{
		{"type": "bold", "text": "Title"}, {"text": "plain"}, {"type": "italic", "text": "em"},
		{"type": "inlineCode", "text": "x = 1"}, {"type": "pre", "text": "block"},
	}}})
	h.peer.Say(dingtalkpeer.Incoming{From: alice, MsgType: "audio", Content: map[string]any{"recognition": "voice transcript"}})
	got := h.WaitPublished(2)
	require.Equal(t, "**Title** plain *em* `x = 1` ```\nblock\n```", got[0].Content)
	require.Equal(t, "voice transcript", got[1].Content)
}

func TestPicturesAndFilesIn(t *testing.T) {
	h := startHarness(t, nil)
	png := []byte("\x89PNG\r\n\x1a\nnot really")
	h.peer.AddFile("code-cat", png)
	h.peer.AddFile("code-doc", []byte("the report"))
	id := h.peer.Say(dingtalkpeer.Incoming{From: alice, MsgType: "picture", Content: map[string]any{"downloadCode": "code-cat", "pictureDownloadCode": "x"}})
	got := h.WaitPublished(1)[0]
	want := filepath.Join(h.Workspace, "media", "dingtalk-"+id+"-0-image.jpg")
	require.Equal(t, []string{want}, got.Media)
	require.Equal(t, "[Image]", got.Content)
	data, err := os.ReadFile(want)
	require.NoError(t, err)
	require.Equal(t, png, data)

	// richText with a picture that is gone, and a file.
	h.peer.Say(dingtalkpeer.Incoming{From: alice, MsgType: "richText", Content: map[string]any{"richText": []map[string]string{
		{"text": "see attached"}, {"type": "picture", "downloadCode": "code-gone"}}}})
	h.peer.Say(dingtalkpeer.Incoming{From: alice, MsgType: "file", Content: map[string]any{"downloadCode": "code-doc", "fileName": "report.txt"}})
	all := h.WaitPublished(3)
	require.Equal(t, "see attached\n[attachment: image.jpg - download failed]", all[1].Content)
	require.Empty(t, all[1].Media)
	require.Equal(t, "[File]", all[2].Content)
	require.Len(t, all[2].Media, 1)
	require.True(t, strings.HasSuffix(all[2].Media[0], "-0-report.txt"))
}

func TestReplyByTheSessionWebhook(t *testing.T) {
	h := startHarness(t, nil)
	h.peer.Say(dingtalkpeer.Incoming{From: alice, Text: "hi"})
	msg := h.WaitPublished(1)[0]
	require.NoError(t, channels.Deliver(context.Background(), h.Ch, reply(msg.Route, "t1", "Hello, **Alice**.\n\n~~old~~ new")))
	sent := h.peer.Sent(alice.StaffID)
	require.Len(t, sent, 1)
	require.Equal(t, "webhook", sent[0].Via, "the message's sessionWebhook answers it while valid")
	require.Equal(t, "Nanobot Reply", sent[0].Title)
	require.Equal(t, "Hello, **Alice**.\n\nold new", sent[0].Text, "rendered for DingTalk")
}

func TestReplyByTheRobotAPIOnceTheWebhookExpired(t *testing.T) {
	h := startHarness(t, nil)
	h.peer.Say(dingtalkpeer.Incoming{From: alice, Text: "hi", WebhookValid: -time.Minute})
	h.peer.Say(dingtalkpeer.Incoming{From: alice, Group: team, AtRobot: true, Text: "hi", WebhookValid: -time.Minute})
	got := h.WaitPublished(2)
	require.NoError(t, channels.Deliver(context.Background(), h.Ch, reply(got[0].Route, "t1", "Hello.")))
	require.NoError(t, channels.Deliver(context.Background(), h.Ch, reply(got[1].Route, "t2", "Hello, team.")))
	dm := h.peer.Sent(alice.StaffID)
	require.Len(t, dm, 1)
	require.Equal(t, dingtalkpeer.Sent{Via: "api", ChatID: alice.StaffID, MsgKey: "sampleMarkdown", Title: "Nanobot Reply", Text: "Hello.",
		Param: map[string]string{"title": "Nanobot Reply", "text": "Hello."}}, dm[0])
	group := h.peer.Sent("group:" + team)
	require.Len(t, group, 1)
	require.Equal(t, "api", group[0].Via)
	require.Equal(t, "# @Alice\n\nHello, team.", group[0].Text, "a group reply names the sender, as in nanobot")

	// A chat the channel never heard from (another gateway's) goes by the API.
	require.NoError(t, channels.Deliver(context.Background(), h.Ch, reply(protocol.Route{Channel: Name, ChatID: bob.StaffID}, "t3", "Hi Bob.")))
	require.Equal(t, "api", h.peer.Sent(bob.StaffID)[0].Via)
	require.Equal(t, 1, h.peer.Stats().Tokens, "the access token is cached")
}

func TestGroupHeaderEscapesTheName(t *testing.T) {
	h := startHarness(t, nil)
	mallory := dingtalkpeer.User{StaffID: "staff-m", Nick: "Alice\n# [click](https://evil) *admin*"}
	h.peer.Say(dingtalkpeer.Incoming{From: mallory, Group: team, AtRobot: true, Text: "hi"})
	msg := h.WaitPublished(1)[0]
	require.NoError(t, channels.Deliver(context.Background(), h.Ch, reply(msg.Route, "t1", "hello")))
	sent := h.peer.Sent("group:" + team)
	require.Len(t, sent, 1)
	require.Equal(t, "webhook", sent[0].Via)
	require.Equal(t, `# @Alice \# \[click\]\(https://evil\) \*admin\*`+"\n\nhello", sent[0].Text)
}

func TestLongReplyIsSplit(t *testing.T) {
	h := startHarness(t, nil)
	var paras []string
	for i := range 90 {
		paras = append(paras, strings.Repeat(string(rune('a'+i%26)), 99))
	}
	text := strings.Join(paras, "\n\n") // 90×99 + 89×2 = 9088 characters
	h.peer.Say(dingtalkpeer.Incoming{From: alice, Text: "tell me"})
	msg := h.WaitPublished(1)[0]
	require.NoError(t, channels.Deliver(context.Background(), h.Ch, reply(msg.Route, "t1", text)))
	sent := h.peer.Sent(alice.StaffID)
	require.Len(t, sent, 3)
	var joined []string
	for _, s := range sent {
		require.LessOrEqual(t, utf8.RuneCountInString(s.Text), maxMessageRunes)
		joined = append(joined, s.Text)
	}
	require.Equal(t, text, strings.Join(joined, "\n\n"))
}

func TestFilesOut(t *testing.T) {
	h := startHarness(t, nil)
	require.NoError(t, os.WriteFile(filepath.Join(h.Workspace, "report.txt"), []byte("the report"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(h.Workspace, "chart.png"), []byte("png"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(h.Workspace, "page.html"), []byte("<p>hi</p>"), 0o644))
	r := reply(protocol.Route{Channel: Name, ChatID: "group:" + team}, "t1", "Here they are.")
	r.Media = []string{"report.txt", "chart.png", "page.html", "https://example.com/cat.jpg", "https://example.com/a.pdf", "missing.pdf"}
	require.NoError(t, channels.Deliver(context.Background(), h.Ch, r))
	sent := h.peer.Sent("group:" + team)
	require.Len(t, sent, 7)
	ups := h.peer.Uploads()
	require.Len(t, ups, 3)
	require.Equal(t, dingtalkpeer.Upload{Type: "file", Name: "report.txt", MediaID: ups[0].MediaID, Data: []byte("the report")}, ups[0])
	require.Equal(t, map[string]string{"mediaId": ups[0].MediaID, "fileName": "report.txt", "fileType": "txt"}, sent[0].Param)
	require.Equal(t, "sampleFile", sent[0].MsgKey)
	require.Equal(t, "image", ups[1].Type)
	require.Equal(t, "sampleImageMsg", sent[1].MsgKey)
	require.Equal(t, ups[1].MediaID, sent[1].Param["photoURL"])
	require.Equal(t, "page.zip", ups[2].Name, "HTML is zipped, as DingTalk refuses it raw")
	require.Equal(t, "zip", sent[2].Param["fileType"])
	require.Equal(t, map[string]string{"photoURL": "https://example.com/cat.jpg"}, sent[3].Param, "an image URL DingTalk fetches itself")
	require.Equal(t, "[a.pdf](https://example.com/a.pdf)", sent[4].Text)
	require.Equal(t, "[Attachment send failed: missing.pdf]", sent[5].Text)
	require.Equal(t, "Here they are.", sent[6].Text)
}

func TestRedeliveredMessageIsTakenOnce(t *testing.T) {
	h := startHarness(t, nil)
	in := dingtalkpeer.Incoming{MsgID: "msgONCE", From: alice, Text: "once"}
	h.peer.Say(in)
	h.peer.Say(in)
	h.sync()
	require.Len(t, h.Published(), 2, "the message and the sync")
	require.Contains(t, h.Logs.String(), "redelivered")

	// The set is kept under the home: a new channel (a restart) knows it too.
	h.Stop()
	// The peer must see the old stream gone, or startOn could take it for the new one.
	require.Eventually(t, func() bool { return !h.peer.Connected() }, 10*time.Second, 10*time.Millisecond)
	h2 := startOn(t, h.peer, h.Env)
	h.peer.Say(in)
	h2.sync()
	require.Len(t, h2.Published(), 1, "only the sync message after the restart")
}

func TestReconnectsAfterADrop(t *testing.T) {
	h := startHarness(t, nil)
	h.sync()
	h.peer.Drop()
	require.Eventually(t, func() bool { return h.peer.Stats().Connections == 2 }, 15*time.Second, 10*time.Millisecond)
	require.Equal(t, 2, h.peer.Stats().Opens, "a new ticket for each connection")
	require.Eventually(t, h.Ch.Connected, 5*time.Second, 10*time.Millisecond)
	h.sync()

	// The server's SYSTEM disconnect: connect again at once.
	h.peer.AskReconnect()
	require.Eventually(t, func() bool { return h.peer.Stats().Connections == 3 }, 5*time.Second, 10*time.Millisecond)
	h.sync()
	require.Len(t, h.Published(), 3)
}

func TestConnectedFollowsTheStream(t *testing.T) {
	h := startHarness(t, nil)
	require.True(t, h.Ch.Connected())
	h.peer.Fail("/v1.0/gateway/connections/open", 503, `{"code":"ServiceUnavailable","message":"busy"}`, nil)
	h.peer.Drop()
	require.Eventually(t, func() bool { return !h.Ch.Connected() }, 5*time.Second, 10*time.Millisecond)
	require.Eventually(t, func() bool { return h.Ch.Connected() && h.peer.Connected() }, 15*time.Second, 10*time.Millisecond,
		"it retries after a failed registration")
	require.Contains(t, h.Logs.String(), "ServiceUnavailable")
}

// TestRefusedPublishIsTakenInAgainAfterARestart: the loss rule on DingTalk.
// A message Temporal did not take is left unacknowledged, and its
// redelivery after a restart goes to the agent.
func TestRefusedPublishIsTakenInAgainAfterARestart(t *testing.T) {
	h := startHarness(t, nil)
	h.Down.Store(true)
	in := dingtalkpeer.Incoming{MsgID: "msgLOST", From: alice, Text: "do not lose me"}
	h.peer.Say(in)
	require.Eventually(t, func() bool { return strings.Contains(h.Logs.String(), "could not be handed to the agent") },
		10*time.Second, 10*time.Millisecond)
	require.Empty(t, h.peer.Responses(), "not acknowledged: DingTalk pushes it again")
	h.Stop()
	require.Eventually(t, func() bool { return !h.peer.Connected() }, 10*time.Second, 10*time.Millisecond)

	h2 := startOn(t, h.peer, h.Env)
	h.peer.Say(in) // DingTalk's redelivery
	got := h2.WaitPublished(1)
	require.Equal(t, "dingtalk:msgLOST", got[0].ID)
	require.Equal(t, "do not lose me", got[0].Content)
	require.Eventually(t, func() bool { return len(h.peer.Responses()) == 1 }, 5*time.Second, 10*time.Millisecond,
		"acknowledged once taken in")
}
