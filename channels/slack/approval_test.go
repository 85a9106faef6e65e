package slack

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/channeltest"
	"github.com/nanobot-durable/nanobot/channels/slack/slackpeer"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/protocol"
)

var asked = protocol.ApprovalRequest{ID: "1a2b", Tool: "exec", Args: "rm -rf build", Key: "exec rm", Timeout: time.Hour}

// behindManager makes the channel publish through a real manager that
// lets only allowFrom in, with unifiedSession as given.
func behindManager(t *testing.T, h *harness, unified bool, allowFrom ...string) *channeltest.Bus {
	cfg := config.Default()
	s := h.ch.cfg
	s.AllowFrom = allowFrom
	setBlock(t, cfg, s)
	cfg.Agents.Defaults.UnifiedSession = unified
	publish, b := channeltest.BehindManager(t, cfg, h.ch)
	h.ch.Attach(publish)
	return b
}

// postRequest has the channel show the request in the reply thread of a
// channel message, the thread's own session (replyInThread).
func postRequest(t *testing.T, h *harness) slackpeer.Message {
	r := channels.Reply{Route: protocol.Route{Channel: Name, ChatID: "C1", ThreadID: "100.000001"}, SessionKey: "slack:C1:100.000001",
		Turn: "t1", MessageIDs: []string{messageID("C1", "100.000001")}, Kind: protocol.ReplyApproval, Approval: &asked, Text: asked.Text()}
	require.NoError(t, channels.Deliver(context.Background(), h.ch, r))
	posts := h.peer.Posts()
	require.Len(t, posts, 1)
	return posts[0]
}

// TestApprovalRequestHasButtons: the request is posted in its thread with
// its text and an actions block of three buttons whose values are the
// commands; the thread's reactions are left alone (the turn goes on).
func TestApprovalRequestHasButtons(t *testing.T) {
	h := startHarness(t, nil)
	posted := postRequest(t, h)
	require.Equal(t, "100.000001", posted.ThreadTS)
	require.Contains(t, posted.Text, "Approval needed [1a2b]", "the text stays as the notification's fallback")
	var blocks []map[string]any
	require.NoError(t, json.Unmarshal([]byte(posted.Blocks), &blocks), posted.Blocks)
	require.Len(t, blocks, 2)
	require.Equal(t, "section", blocks[0]["type"])
	require.Equal(t, "actions", blocks[1]["type"])
	require.Equal(t, "nanobot_approval", blocks[1]["block_id"])
	var got [][3]string
	for _, e := range blocks[1]["elements"].([]any) {
		b := e.(map[string]any)
		style, _ := b["style"].(string)
		got = append(got, [3]string{b["action_id"].(string), b["value"].(string), style})
	}
	require.Equal(t, [][3]string{
		{"nanobot_approval_approve", "/approve 1a2b", "primary"},
		{"nanobot_approval_deny", "/deny 1a2b", "danger"},
		{"nanobot_approval_always", "/approve 1a2b always", ""},
	}, got)
	require.Empty(t, h.peer.Reactions(), "no doneEmoji: the turn still runs")
}

func click(posted slackpeer.Message, user, value string) slackpeer.Click {
	return slackpeer.Click{User: user, Channel: posted.Channel, Message: posted, ActionID: "nanobot_approval_approve",
		BlockID: "nanobot_approval", Value: value}
}

// TestClickBecomesTheClickersMessage: a click is acknowledged and becomes
// the clicker's message with the command's text in the request's channel
// and thread, in the session that asked — the one a typed message in the
// thread has — once, however often Slack redelivers it; the buttons give
// way to who answered.
func TestClickBecomesTheClickersMessage(t *testing.T) {
	h := startHarness(t, nil)
	b := behindManager(t, h, false, "U1")
	posted := postRequest(t, h)
	h.peer.Push("env-1", "Ev1", 0, slackpeer.AppMention("C1", "U1", "100.000009", "100.000001", "<@"+peerBot+"> /approve 1a2b"))
	h.peer.PushClick("env-2", click(posted, "U1", "/approve 1a2b"))
	h.peer.PushClick("env-2", click(posted, "U1", "/approve 1a2b")) // the same envelope again
	require.Eventually(t, func() bool { return len(b.Admitted()) == 2 }, 10*time.Second, 10*time.Millisecond)
	typed, pressed := b.Admitted()[0], b.Admitted()[1]
	require.Equal(t, "/approve 1a2b", pressed.Content)
	require.Equal(t, protocol.Route{Channel: Name, ChatID: "C1", ThreadID: "100.000001", SenderID: "U1"}, pressed.Route)
	require.Equal(t, typed.SessionKey, pressed.SessionKey, "the session that asked")
	require.Equal(t, "slack:C1:100.000001", pressed.SessionKey)
	require.True(t, pressed.Group)
	require.Equal(t, []string{"env-1", "env-2", "env-2"}, h.peer.Acks())

	require.Eventually(t, func() bool { return len(h.peer.Updates()) == 1 }, 10*time.Second, 10*time.Millisecond)
	u := h.peer.Updates()[0]
	require.Equal(t, posted.TS, u.TS)
	require.NotContains(t, u.Blocks, `"actions"`, "the buttons are gone")
	require.Contains(t, u.Blocks, "\\u003c@U1\\u003e answered `/approve 1a2b`")
	require.Len(t, b.Admitted(), 2)
}

// TestStrangersClickIsRefused: a click by someone not allowed is refused
// by the manager like a typed message: nothing reaches the agent and the
// buttons stay; a button of another app is not a message at all.
func TestStrangersClickIsRefused(t *testing.T) {
	h := startHarness(t, nil)
	b := behindManager(t, h, false, "U1")
	posted := postRequest(t, h)
	h.peer.PushClick("env-1", click(posted, "U9", "/approve 1a2b"))
	h.peer.Push("env-2", "Ev2", 0, slackpeer.AppMention("C1", "U9", "100.000010", "", "<@"+peerBot+"> /approve 1a2b"))
	other := click(posted, "U1", "/approve 1a2b")
	other.ActionID = "someone_elses_button"
	h.peer.PushClick("env-3", other)
	h.peer.PushClick("env-4", click(posted, "U1", "rm -rf /"))
	h.peer.Push("env-5", "Ev5", 0, slackpeer.AppMention("C1", "U1", "100.000011", "", "<@"+peerBot+"> done?"))
	require.Eventually(t, func() bool { return len(b.Admitted()) == 1 }, 10*time.Second, 10*time.Millisecond)
	require.Equal(t, "done?", b.Admitted()[0].Content, "only the allowed user's typed message got in")
	require.Empty(t, h.peer.Updates(), "the buttons stay for someone allowed")
}

// TestClickOnATopLevelRequestAnswersTheChat: a request posted at the top
// of a DM belongs to the DM's session, even once someone replied to it in
// a thread (Slack then gives the request a thread_ts of its own ts).
func TestClickOnATopLevelRequestAnswersTheChat(t *testing.T) {
	h := startHarness(t, nil)
	b := behindManager(t, h, false, "U1")
	r := channels.Reply{Route: protocol.Route{Channel: Name, ChatID: "D1"}, SessionKey: "slack:D1",
		Turn: "t1", Kind: protocol.ReplyApproval, Approval: &asked, Text: asked.Text()}
	require.NoError(t, channels.Deliver(context.Background(), h.ch, r))
	posted := h.peer.Posts()[0]
	posted.ThreadTS = posted.TS
	h.peer.PushClick("env-1", click(posted, "U1", "/approve 1a2b"))
	require.Eventually(t, func() bool { return len(b.Admitted()) == 1 }, 10*time.Second, 10*time.Millisecond)
	pressed := b.Admitted()[0]
	require.Equal(t, "slack:D1", pressed.SessionKey)
	require.Empty(t, pressed.Route.ThreadID, "the answer goes where the request is")
}
