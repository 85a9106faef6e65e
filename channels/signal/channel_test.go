package signal

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/channeltest"
	"github.com/nanobot-durable/nanobot/channels/signal/signalpeer"
	"github.com/nanobot-durable/nanobot/protocol"
)

var alice, bob = signalpeer.Alice, signalpeer.Bob

func TestDirectMessageInReplyOut(t *testing.T) {
	peer := signalpeer.New(t)
	h := start(t, peer, nil)
	ts := peer.DM(alice, "hello bot")
	got := h.WaitPublished(1)[0]
	require.Equal(t, "hello bot", got.Content)
	require.False(t, got.Group)
	require.Nil(t, got.Scope, "the chat's own session, as in nanobot")
	require.Equal(t, alice.Number, got.Route.ChatID, "a direct chat is named by the number")
	require.Equal(t, alice.Number+"|"+alice.UUID, got.Route.SenderID, "nanobot's number|uuid")
	require.Equal(t, time.UnixMilli(ts), got.SentAt)

	require.NoError(t, channels.Deliver(context.Background(), h.Ch, channels.Reply{Route: got.Route, Text: "Hi **Alice**, see `x`.", Kind: protocol.ReplyAnswer}))
	sent := peer.Sent(alice.Number)
	require.Len(t, sent, 1)
	require.Equal(t, "Hi Alice, see x.", sent[0].Message)
	require.Equal(t, []string{"3:5:BOLD", "14:1:MONOSPACE"}, sent[0].TextStyle)

	require.NoError(t, h.Ch.SendTyping(context.Background(), got.Route))
	require.Contains(t, peer.Typing(), signalpeer.Typing{Recipient: alice.Number})
	require.Contains(t, peer.Methods(), "updateConfiguration", "typing indicators are turned on, as in nanobot")
}

func TestGroupPolicy(t *testing.T) {
	peer := signalpeer.New(t)
	h := start(t, peer, nil)
	peer.Group(bob, "just chatting", false)
	peer.Group(alice, "what did Bob say?", true)
	got := h.WaitPublished(1)
	require.Len(t, got, 1, "the message without a mention is not answered")
	require.True(t, got[0].Group)
	require.Equal(t, signalpeer.GroupID, got[0].Route.ChatID)
	require.Nil(t, got[0].Scope, "one session per group, as in nanobot")
	require.Equal(t, "[Recent group messages for context:]\nBob: just chatting\n---\n[Alice]: what did Bob say?", got[0].Content,
		"the mention is taken out; the group's chatter comes along")

	peer.Group(bob, "/status", false)
	require.Equal(t, "[Recent group messages for context:]\nBob: just chatting\nAlice: \uFFFC what did Bob say?\n---\n[Bob]: /status",
		h.WaitPublished(2)[1].Content, "a command needs no mention")

	require.NoError(t, channels.Deliver(context.Background(), h.Ch, channels.Reply{Route: got[0].Route, Text: "He chatted."}))
	require.Equal(t, []string{"He chatted."}, peer.Messages(signalpeer.GroupID), "sent with groupId")
	require.NoError(t, h.Ch.SendTyping(context.Background(), got[0].Route))
	require.Contains(t, peer.Typing(), signalpeer.Typing{GroupID: signalpeer.GroupID})
}

func TestGroupsOffAndDMsOff(t *testing.T) {
	peer := signalpeer.New(t)
	h := start(t, peer, map[string]any{"dm": map[string]any{"enabled": false},
		"group": map[string]any{"enabled": false}})
	peer.DM(alice, "anyone there?")
	peer.Group(alice, "hello group", true)
	require.Eventually(t, func() bool {
		return strings.Contains(h.Logs.String(), "groups are off") && strings.Contains(h.Logs.String(), "direct messages are off (channels.signal.dm.enabled)")
	}, 10*time.Second, 10*time.Millisecond)
	require.Empty(t, h.Published())
}

func TestAttachmentIn(t *testing.T) {
	peer := signalpeer.New(t)
	h := start(t, peer, nil)
	peer.File(alice, "look", "cat.png", "image/png", []byte("png bytes"))
	got := h.WaitPublished(1)[0]
	require.Len(t, got.Media, 1)
	data, err := os.ReadFile(got.Media[0])
	require.NoError(t, err)
	require.Equal(t, "png bytes", string(data))
	require.Equal(t, "look\n[image: "+got.Media[0]+"]", got.Content)
	require.Contains(t, got.Media[0], h.Workspace)
	require.Regexp(t, `^signal-[^/]+-cat\.png$`, filepath.Base(got.Media[0]), "the attachment's id and its name")
}

func TestFileOut(t *testing.T) {
	peer := signalpeer.New(t)
	h := start(t, peer, nil)
	require.NoError(t, os.WriteFile(h.Workspace+"/report.txt", []byte("report"), 0o644))
	route := protocol.Route{Channel: Name, ChatID: alice.Number}
	require.NoError(t, channels.Deliver(context.Background(), h.Ch, channels.Reply{Route: route, Text: "Here.", Media: []string{"report.txt", "missing.txt"}}))
	sent := peer.Sent(alice.Number)
	require.Len(t, sent, 3)
	require.Equal(t, []byte("report"), peer.Attached(sent[0].Attachments[0]))
	require.Equal(t, "[attachment: missing.txt - send failed]", sent[1].Message)
	require.Equal(t, "Here.", sent[2].Message)
}

// TestRefusedFileBecomesANote: a file the daemon refuses for good goes
// out as a line saying so, and the rest of the reply follows (the kit's
// rule, channels.SendFile), rather than failing the delivery.
func TestRefusedFileBecomesANote(t *testing.T) {
	peer := signalpeer.New(t)
	h := start(t, peer, nil)
	peer.RefuseFiles()
	require.NoError(t, os.WriteFile(h.Workspace+"/report.txt", []byte("report"), 0o644))
	route := protocol.Route{Channel: Name, ChatID: alice.Number}
	require.NoError(t, channels.Deliver(context.Background(), h.Ch, channels.Reply{Route: route, Text: "Here.", Media: []string{"report.txt"}}))
	require.Equal(t, []string{"[attachment: report.txt - send failed]", "Here."}, peer.Messages(alice.Number))
}

// A dropped stream is reopened after the last event taken; what came in
// meanwhile arrives once, and a replay of everything is taken in once.
func TestDroppedStreamResumes(t *testing.T) {
	peer := signalpeer.New(t)
	h := start(t, peer, nil)
	peer.DM(alice, "before")
	h.WaitPublished(1)
	peer.Drop()
	require.Eventually(t, func() bool { return !h.Ch.Connected() }, 10*time.Second, 10*time.Millisecond)
	peer.DM(alice, "during")
	h.WaitPublished(2)
	n, lastIDs := peer.Connections()
	require.Equal(t, 2, n)
	require.Equal(t, "", lastIDs[0])
	require.NotEmpty(t, lastIDs[1], "resumed after the last event")

	peer.ForgetIDs()
	peer.Drop()
	require.Eventually(t, func() bool { n, _ := peer.Connections(); return n == 3 && h.Ch.Connected() }, 10*time.Second, 10*time.Millisecond)
	peer.DM(alice, "after")
	got := h.WaitPublished(3)
	require.Eventually(t, func() bool { return strings.Count(h.Logs.String(), "already taken in") == 2 }, 10*time.Second, 10*time.Millisecond)
	require.Len(t, h.Published(), 3)
	require.Equal(t, []string{"before", "during", "after"}, []string{got[0].Content, got[1].Content, got[2].Content})
}

// A message the agent did not take (Temporal down) is handed over again
// until it is taken; nothing after it is read meanwhile.
func TestRefusedPublishIsTakenAgain(t *testing.T) {
	peer := signalpeer.New(t)
	h := start(t, peer, nil)
	h.Down.Store(true)
	peer.DM(alice, "take me")
	peer.DM(alice, "and me")
	require.Eventually(t, func() bool { return strings.Contains(h.Logs.String(), "could not be handed to the agent") },
		10*time.Second, 10*time.Millisecond)
	h.Down.Store(false)
	got := h.WaitPublished(2)
	require.Equal(t, []string{"take me", "and me"}, []string{got[0].Content, got[1].Content}, "in order")
}

// A restarted channel resumes after the last event it handed over: what
// came while it was down arrives, what it took before does not again; one
// the agent did not take before the restart is taken after it.
func TestRestartResumesAfterTheLastEvent(t *testing.T) {
	peer := signalpeer.New(t)
	env := channeltest.NewEnv(t, Name, block(peer))
	first := channeltest.Start(t, env, New)
	peer.DM(alice, "one")
	first.WaitPublished(1)
	first.Down.Store(true)
	peer.DM(alice, "two")
	require.Eventually(t, func() bool { return strings.Contains(env.Logs.String(), "could not be handed to the agent") },
		10*time.Second, 10*time.Millisecond)
	first.Stop()
	peer.DM(alice, "three")
	second := channeltest.Start(t, env, New)
	got := second.WaitPublished(2)
	require.Equal(t, []string{"two", "three"}, []string{got[0].Content, got[1].Content})
	_, lastIDs := peer.Connections()
	require.NotEmpty(t, lastIDs[1])
	peer.DM(alice, "four")
	second.WaitPublished(3)
	require.Len(t, second.Published(), 3, "one was not taken again")
}

func TestBadPayloadDropped(t *testing.T) {
	peer := signalpeer.New(t)
	h := start(t, peer, nil)
	peer.Raw("{not json")
	peer.Raw(`{"envelope":{"sourceNumber":"+1555","dataMessage":{"message":"no timestamp"}}}`)
	peer.DM(alice, "still here")
	require.Equal(t, "still here", h.WaitPublished(1)[0].Content)
	require.Len(t, h.Published(), 1)
	require.Contains(t, h.Logs.String(), "signal event dropped: not JSON")
	require.Contains(t, h.Logs.String(), "no sender or timestamp")
}

func TestAllowFromVariants(t *testing.T) {
	c := defaults()
	c.DM.AllowFrom = []string{"15550000002", "+15550000009", "ABCD-uuid"}
	allow := c.Allowed()
	require.True(t, allow.Allows("+15550000002|"+alice.UUID), "a number matches without its +")
	require.True(t, allow.Allows("15550000009"))
	require.True(t, allow.Allows("+15550000004|abcd-uuid"), "uuids match whatever their case")
	require.False(t, allow.Allows(bob.Number+"|"+bob.UUID))
	c.DM.Policy = channels.PolicyOpen
	require.True(t, c.Allowed().Allows(bob.Number))
}

func TestConfigErrorsNameTheKey(t *testing.T) {
	for block, want := range map[string]string{
		`{"enabled":true,"phoneNumber":"+1","dm":{"policy":"pairing"}}`:  `channels.signal.dm.policy "pairing"`,
		`{"enabled":true,"phoneNumber":"+1","daemonPort":0}`:             "channels.signal.daemonPort 0",
		`{"enabled":true,"phoneNumber":"+1","groupMessageBufferSize":0}`: "channels.signal.groupMessageBufferSize 0",
	} {
		cfg := channeltest.ConfigWith(t, Name, block)
		_, err := New(channels.Deps{Config: cfg})
		require.ErrorContains(t, err, want)
		require.ErrorContains(t, err, cfg.Path)
	}
}

func TestMentionStripCountsUTF16(t *testing.T) {
	self := newAccountIDs(signalpeer.Account)
	text := "😀 \uFFFC hi"
	m := []mention{{Number: signalpeer.Account, Start: 3, Length: 1}} // 😀 is two UTF-16 units
	require.True(t, self.mentioned(text, m))
	require.Equal(t, "😀  hi", self.stripMentions(text, m))
	require.False(t, self.mentioned("hi all", nil))
	require.True(t, self.mentioned("ask +15550000001 please", nil), "the number in the text counts, as in nanobot")
}
