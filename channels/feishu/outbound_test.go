package feishu

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/channeltest"
	"github.com/nanobot-durable/nanobot/channels/feishu/feishupeer"
	"github.com/nanobot-durable/nanobot/protocol"
)

func TestAnswerIsACardInTheChat(t *testing.T) {
	h := startHarness(t, nil)
	id := h.peer.Say(feishupeer.Incoming{Sender: alice, Text: "hi"})
	h.WaitPublished(1)
	require.NoError(t, channels.Deliver(context.Background(), h.Ch, reply(alice.OpenID, id, "t1", "Hello, **Feishu**.")))
	msgs := h.peer.Messages(alice.OpenID)
	require.Len(t, msgs, 1)
	require.Equal(t, "interactive", msgs[0].MsgType)
	require.Equal(t, "Hello, **Feishu**.", msgs[0].Text())
	require.Empty(t, msgs[0].ReplyTo, "replyToMessage is off by default (nanobot)")
	require.Equal(t, 1, h.peer.CallsTo("POST", "/open-apis/im/v1/messages"))

	require.NoError(t, channels.Deliver(context.Background(), h.Ch, reply(group, "", "t2", "to the group")))
	require.Len(t, h.peer.Messages(group), 1, "a chat_id is sent with receive_id_type=chat_id")
}

func TestReplyToMessageAndTopics(t *testing.T) {
	h := startHarness(t, map[string]any{"replyToMessage": true, "groupPolicy": "open"})
	dm := h.peer.Say(feishupeer.Incoming{Sender: alice, Text: "hi"})
	gm := h.peer.Say(feishupeer.Incoming{ChatID: group, Group: true, Sender: alice, Text: "in the group"})
	h.WaitPublished(2)
	long := strings.Repeat("word ", 700) + "\n\n" + strings.Repeat("more ", 700)
	require.NoError(t, channels.Deliver(context.Background(), h.Ch, reply(alice.OpenID, dm, "t1", long)))
	msgs := h.peer.Messages(alice.OpenID)
	require.Len(t, msgs, 2, "split at the limit")
	require.Equal(t, dm, msgs[0].ReplyTo, "the first part replies to the user's message")
	require.False(t, msgs[0].InThread, "a p2p reply opens no topic")
	require.Empty(t, msgs[1].ReplyTo, "later parts are plain messages")

	require.NoError(t, channels.Deliver(context.Background(), h.Ch, reply(group, gm, "t2", "answer")))
	g := h.peer.Messages(group)
	require.Len(t, g, 1)
	require.Equal(t, gm, g[0].ReplyTo)
	require.True(t, g[0].InThread, "replyToMessage in a group opens a topic (nanobot)")
}

func TestTopicMessageIsAnsweredInItsTopic(t *testing.T) {
	h := startHarness(t, map[string]any{"groupPolicy": "open"})
	id := h.peer.Say(feishupeer.Incoming{ChatID: group, Group: true, Sender: alice, Text: "in a topic", RootID: "om_root", ThreadID: "omt_1"})
	in := h.WaitPublished(1)[0]
	r := channels.Reply{ID: "t1#a", Route: in.Route, Turn: "t1", Text: strings.Repeat("x ", 2500), Kind: protocol.ReplyAnswer}
	require.NoError(t, channels.Deliver(context.Background(), h.Ch, r))
	msgs := h.peer.Messages(group)
	require.Len(t, msgs, 2)
	for _, m := range msgs {
		require.Equal(t, id, m.ReplyTo, "every part stays in the topic")
		require.True(t, m.InThread)
	}
	progress := in.Route
	progress.ReplyTo = "" // a streamed tool hint answers nobody
	_, err := h.Ch.SendPart(context.Background(), channels.Reply{Route: progress}, channels.Part{Text: "working", Last: true})
	require.NoError(t, err)
	msgs = h.peer.Messages(group)
	require.Equal(t, "om_root", msgs[2].ReplyTo, "progress lands in the topic, through its root")
	require.True(t, msgs[2].InThread)
}

func TestTablesGoOnePerCard(t *testing.T) {
	h := startHarness(t, nil)
	text := "# Report\n\n| a | b |\n| - | - |\n| **1** | 2 |\n\nbetween\n\n| c |\n| - |\n| 3 |\n"
	require.NoError(t, channels.Deliver(context.Background(), h.Ch, reply(alice.OpenID, "", "t1", text)))
	msgs := h.peer.Messages(alice.OpenID)
	require.Len(t, msgs, 2, "Feishu takes one table per card")
	require.Equal(t, "**Report**\n[table]\nbetween", msgs[0].Text())
	require.Equal(t, "[table]", msgs[1].Text())
	var card struct {
		Config   map[string]bool  `json:"config"`
		Elements []map[string]any `json:"elements"`
	}
	require.NoError(t, json.Unmarshal([]byte(msgs[0].Content), &card))
	require.True(t, card.Config["update_multi"], "the card can be updated (streaming)")
	rows := card.Elements[1]["rows"].([]any)
	require.Equal(t, map[string]any{"c0": "1", "c1": "2"}, rows[0], "cells lose their Markdown marks")
}

func TestStreamingUpdatesTheCard(t *testing.T) {
	h := startHarness(t, nil)
	require.Equal(t, streamInterval, h.Ch.StreamEvery())
	route := protocol.Route{Channel: Name, ChatID: alice.OpenID}
	id, err := h.Ch.SendPart(context.Background(), channels.Reply{Route: route}, channels.Part{Text: "Hel", Last: true})
	require.NoError(t, err)
	require.NoError(t, h.Ch.EditMessage(context.Background(), route, id, "Hello, world"))
	msgs := h.peer.Messages(alice.OpenID)
	require.Len(t, msgs, 1)
	require.Equal(t, 1, msgs[0].Edits)
	require.Equal(t, "Hello, world", msgs[0].Text())
	require.Equal(t, 1, h.peer.CallsTo("PATCH", "/open-apis/im/v1/messages/"+id))

	err = h.Ch.EditMessage(context.Background(), route, "om_gone", "x")
	var se *channels.SendError
	require.ErrorAs(t, err, &se)
	require.True(t, se.Permanent, "a message that is gone cannot be edited")

	off := startHarness(t, map[string]any{"streaming": false})
	require.Zero(t, off.Ch.StreamEvery())
}

func TestReactionWhileWorking(t *testing.T) {
	h := startHarness(t, map[string]any{"doneEmoji": "DONE"})
	require.Equal(t, "THUMBSUP", h.Ch.AckEmoji())
	id := h.peer.Say(feishupeer.Incoming{Sender: alice, Text: "hi"})
	in := h.WaitPublished(1)[0]
	require.NoError(t, h.Ch.React(context.Background(), in.Route, id, "THUMBSUP"))
	require.NoError(t, h.Ch.Unreact(context.Background(), in.Route, id, "THUMBSUP"))
	require.Equal(t, []string{"+THUMBSUP", "-THUMBSUP", "+DONE"}, h.peer.Reactions(id))
}

func TestMediaOut(t *testing.T) {
	h := startHarness(t, nil)
	require.NoError(t, os.WriteFile(filepath.Join(h.Workspace, "chart.png"), []byte("png"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(h.Workspace, "report.pdf"), []byte("%PDF"), 0o644))
	r := reply(alice.OpenID, "", "t1", "here you go")
	r.Media = []string{"chart.png", filepath.Join(h.Workspace, "report.pdf"), "missing.txt", "https://example.invalid/x.png"}
	require.NoError(t, channels.Deliver(context.Background(), h.Ch, r))
	up := h.peer.Uploads()
	require.Len(t, up, 2)
	require.Equal(t, "image", up[0].Kind)
	require.Equal(t, "message", up[0].Type)
	require.Equal(t, "png", string(up[0].Data))
	require.Equal(t, "file", up[1].Kind)
	require.Equal(t, "pdf", up[1].Type)
	require.Equal(t, "report.pdf", up[1].Name)
	msgs := h.peer.Messages(alice.OpenID)
	require.Len(t, msgs, 5)
	require.Equal(t, "image", msgs[0].MsgType)
	require.JSONEq(t, `{"image_key":"`+up[0].Key+`"}`, msgs[0].Content)
	require.Equal(t, "file", msgs[1].MsgType)
	require.JSONEq(t, `{"file_key":"`+up[1].Key+`"}`, msgs[1].Content)
	require.Equal(t, "[attachment: missing.txt - send failed]", msgs[2].Text())
	require.Equal(t, "https://example.invalid/x.png", msgs[3].Text())
	require.Equal(t, "here you go", msgs[4].Text())
}

func TestRateLimitAndRefusals(t *testing.T) {
	h := startHarness(t, nil)
	h.peer.Fail("POST", "/open-apis/im/v1/messages", 429, 99991400, 1)
	_, err := h.Ch.SendPart(context.Background(), reply(alice.OpenID, "", "t1", "x"), channels.Part{Text: "x", Last: true})
	var se *channels.SendError
	require.ErrorAs(t, err, &se)
	require.Equal(t, 2*time.Second, se.RetryAfter, "x-ogw-ratelimit-reset")
	require.False(t, se.Permanent)

	h.peer.Fail("POST", "/open-apis/im/v1/messages", 400, 230002, 1)
	_, err = h.Ch.SendPart(context.Background(), reply(group, "", "t2", "x"), channels.Part{Text: "x", Last: true})
	require.ErrorAs(t, err, &se)
	require.True(t, se.Permanent, "the bot is not in the chat")

	h.peer.Fail("POST", "/open-apis/im/v1/messages", 500, 1, 1)
	_, err = h.Ch.SendPart(context.Background(), reply(group, "", "t3", "x"), channels.Part{Text: "x", Last: true})
	require.Error(t, err)
	require.False(t, errors.As(err, &se), "a 5xx is retried with backoff")
}

func TestTokenIsRefreshed(t *testing.T) {
	h := startHarness(t, nil)
	require.Equal(t, 1, h.peer.TokensIssued())
	send := func(turn string) {
		_, err := h.Ch.SendPart(context.Background(), reply(alice.OpenID, "", turn, "x"), channels.Part{Text: "x", Last: true})
		require.NoError(t, err)
	}
	send("t1")
	require.Equal(t, 1, h.peer.TokensIssued(), "the token is cached")
	h.peer.ExpireTokens()
	send("t2")
	require.Equal(t, 2, h.peer.TokensIssued(), "a refused token is fetched again and the call made once more")
	require.Len(t, h.peer.Messages(alice.OpenID), 2)

	h.peer.TokenExpire(2) // shorter-lived than the three minutes kept in hand: renewed halfway
	h.peer.ExpireTokens()
	send("t3")
	require.Equal(t, 3, h.peer.TokensIssued())
	require.Eventually(t, func() bool { send("t4"); return h.peer.TokensIssued() == 4 }, 5*time.Second, 100*time.Millisecond,
		"a token near its expiry is renewed before use")
}

func TestFetchedTokenJoinsTheLogMask(t *testing.T) {
	peer := feishupeer.New(t)
	deps := depsFor(t, peer, nil)
	ch, err := New(deps)
	require.NoError(t, err)
	require.NoError(t, ch.Start(context.Background(), channeltest.NewPublisher(t).Publish))
	defer func() { _ = ch.Stop(context.Background()) }()
	masked := deps.Secrets.Redact("token t-peer-token-000001 and " + feishupeer.AppSecret)
	require.NotContains(t, masked, "t-peer-token-000001")
	require.NotContains(t, masked, feishupeer.AppSecret)
}

func TestToolHintsOneCallPerLine(t *testing.T) {
	h := startHarness(t, nil)
	require.Equal(t, "🔧 read_file(\"a, b.txt\")\n🔧 exec(ls, -l)\n🔧 web_search", h.Ch.DrawHint(`read_file("a, b.txt"), exec(ls, -l), web_search`))
	require.Equal(t, "🔧 write_file note.txt", h.Ch.DrawHint("write_file note.txt"))
}

func TestNewSessionIsADividerInP2P(t *testing.T) {
	h := startHarness(t, nil)
	require.NoError(t, channels.Deliver(context.Background(), h.Ch, reply(alice.OpenID, "", "t1", "New session started.")))
	require.NoError(t, channels.Deliver(context.Background(), h.Ch, reply(group, "", "t2", "New session started.")))
	dm := h.peer.Messages(alice.OpenID)
	require.Len(t, dm, 1)
	require.Equal(t, "system", dm[0].MsgType)
	require.JSONEq(t, `{"type":"divider","params":{"divider_text":{"text":"New session started."}}}`, dm[0].Content)
	require.Equal(t, "interactive", h.peer.Messages(group)[0].MsgType, "a group gets a card")
}
