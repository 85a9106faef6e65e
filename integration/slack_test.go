package integration

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels/slack/slackpeer"
	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// startSlackGateway runs `nanobot gateway` until the test ends.
func startSlackGateway(t *testing.T, env []string) outputs {
	t.Helper()
	_, out, errOut := startNanobot(t, env, "gateway")
	return outputs{out, errOut}
}

// slackThreadPosts are the bot's posts in one thread.
func slackThreadPosts(p *slackpeer.Peer, channel, thread string) []slackpeer.Message {
	var out []slackpeer.Message
	for _, m := range p.Posts() {
		if m.Channel == channel && m.ThreadTS == thread {
			out = append(out, m)
		}
	}
	return out
}

// TestSlackGatewayEndToEnd drives the real gateway binary through slack-go's
// slacktest server in Socket Mode, with the real Temporal and a scripted
// model at the wire: an app mention in, a threaded mrkdwn reply out; the
// same event redelivered (same envelope, then Slack's retry with a new
// envelope) is answered once; a channel message without a mention is not
// answered; a follow-up in the thread gets the thread's own session with
// the thread's earlier messages, and its reply streams into one message
// that the final reply edits.
func TestSlackGatewayEndToEnd(t *testing.T) {
	dev := testenv.StartDevServer(t)
	model := modeltest.New()
	defer model.Close()
	peer := slackpeer.New(t)
	const (
		channel = "C0E2E0001"
		alice   = "U0ALICE01"
		first   = "1700000000.000100"
		chatter = "1700000001.000100"
		second  = "1700000002.000100"
	)
	home := testenv.NewHome(t, model.URL(), map[string]any{"channels": map[string]any{"slack": map[string]any{
		"enabled": true, "botToken": "xoxb-e2e", "appToken": "xapp-e2e", "apiBase": peer.APIURL(),
		"allowFrom": []string{alice},
	}}})
	logs := startSlackGateway(t, home.Env(dev.Addr))
	require.Eventually(t, func() bool { return peer.Connections() == 1 }, 90*time.Second, 50*time.Millisecond,
		"the gateway never opened its Socket Mode connection")
	peer.Hello()
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "slack: Socket Mode, @") }, 30*time.Second, 50*time.Millisecond,
		"the banner names the Slack bot")

	model.Script(modeltest.Text("**Four**, of course."))
	mention := slackpeer.AppMention(channel, alice, first, "", "<@"+slackpeer.BotUserID+"> what is 2+2?")
	sent := time.Now()
	peer.Push("env-1", "Ev0001", 0, mention)
	var reply slackpeer.Message
	require.Eventually(t, func() bool {
		posts := slackThreadPosts(peer, channel, first)
		if len(posts) != 1 {
			return false
		}
		reply = posts[0]
		shown, _ := peer.Shown(channel, reply.TS)
		return shown == "*Four*, of course."
	}, 60*time.Second, 50*time.Millisecond, "no threaded reply")
	waitSlackDone(t, peer, channel, first)
	t.Logf("mention to delivered reply: %v", time.Since(sent).Round(time.Millisecond))
	require.Contains(t, peer.Reactions(), slackpeer.Reaction{Op: "add", Name: "eyes", Channel: channel, TS: first})
	require.Contains(t, peer.Reactions(), slackpeer.Reaction{Op: "remove", Name: "eyes", Channel: channel, TS: first})

	// Redelivered: the same envelope again, then Slack's retry of the event.
	peer.Push("env-1", "Ev0001", 0, mention)
	peer.Push("env-2", "Ev0001", 1, mention)
	// Not addressed to the bot (groupPolicy "mention").
	peer.Push("env-3", "Ev0002", 0, slackpeer.MessageEvent(channel, "channel", alice, chatter, "", "just chatting"))
	// A follow-up in the reply's thread: its session is the thread's, and
	// the model is told what was said in the thread before.
	peer.SetReplies(channel, first,
		map[string]any{"type": "message", "user": alice, "ts": first, "text": "<@" + slackpeer.BotUserID + "> what is 2+2?"},
		map[string]any{"type": "message", "user": slackpeer.BotUserID, "ts": reply.TS, "text": "*Four*, of course."},
	)
	// Streamed slowly enough for the stream to draw before the reply is final.
	model.Script(modeltest.Text("Yes, still four.").ChunkDelay(700 * time.Millisecond))
	peer.Push("env-4", "Ev0003", 0, slackpeer.AppMention(channel, alice, second, first, "<@"+slackpeer.BotUserID+"> sure?"))
	require.Eventually(t, func() bool {
		posts := slackThreadPosts(peer, channel, first)
		if len(posts) < 2 {
			return false
		}
		shown, _ := peer.Shown(channel, posts[1].TS)
		return shown == "Yes, still four."
	}, 60*time.Second, 50*time.Millisecond, "no reply to the follow-up")
	waitSlackDone(t, peer, channel, second) // the final reply was delivered, not only streamed

	streamed := slackThreadPosts(peer, channel, first)[1]
	require.NotEqual(t, "Yes, still four.", streamed.Text, "the stream posted the start of the reply…")
	require.True(t, strings.HasPrefix("Yes, still four.", streamed.Text), "posted %q", streamed.Text)
	// …and the final reply edited that message rather than posting another.
	require.Equal(t, 2, model.Count(), "the model was asked once per message: redeliveries and chatter never reached it")
	require.Len(t, slackThreadPosts(peer, channel, first), 2, "one post per answered message")
	require.Empty(t, slackThreadPosts(peer, channel, chatter))
	require.Equal(t, []string{"env-1", "env-1", "env-2", "env-3", "env-4"}, peer.Acks(), "every envelope acknowledged")

	// The mention opened a thread: its session holds both exchanges, the
	// follow-up with the thread's context, as nanobot gives it.
	_, msgs := sessionLines(t, home, "slack:"+channel+":"+first)
	require.Equal(t, []string{
		"user: what is 2+2?", "assistant: **Four**, of course.",
		"user: Slack thread context before this mention:\n- <@" + alice + ">: what is 2+2?\n- bot: *Four*, of course.\n\nCurrent message:\nsure?",
		"assistant: Yes, still four.",
	}, slackRoles(msgs))
}

// waitSlackDone waits for the done reaction the final reply puts on the message it answers.
func waitSlackDone(t *testing.T, peer *slackpeer.Peer, channel, ts string) {
	t.Helper()
	require.Eventually(t, func() bool {
		for _, r := range peer.Reactions() {
			if r == (slackpeer.Reaction{Op: "add", Name: "white_check_mark", Channel: channel, TS: ts}) {
				return true
			}
		}
		return false
	}, 60*time.Second, 50*time.Millisecond, "no done reaction on %s", ts)
}

func slackRoles(msgs []chat.Message) []string {
	out := make([]string, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, string(m.Role)+": "+m.Content)
	}
	return out
}
