package slack

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/channeltest"
	"github.com/nanobot-durable/nanobot/channels/slack/slackpeer"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
)

const peerBot = slackpeer.BotUserID

// harness is the channel connected to a slackpeer, publishing into a list.
type harness struct {
	t    *testing.T
	cfg  *config.Config
	peer *slackpeer.Peer
	ch   *Channel
	logs *testenv.SyncBuffer

	*channeltest.Publisher // stands where the manager is
}

func startHarness(t *testing.T, mod func(*config.Config)) *harness {
	t.Helper()
	return startHarnessWith(t, mod, nil)
}

// startHarnessWith connects a channel whose dedupe sets come from seen, as
// a gateway on a database opens them (nil: the channel keeps its own).
func startHarnessWith(t *testing.T, mod func(*config.Config), seen func(string, int) channels.SeenKeys) *harness {
	t.Helper()
	peer := slackpeer.New(t)
	cfg := config.Default()
	s := defaults()
	s.Enabled, s.BotToken, s.AppToken, s.APIBase, s.AllowFrom = true, "xoxb-test", "xapp-test", peer.APIURL(), []string{"*"}
	setBlock(t, cfg, s)
	if mod != nil {
		mod(cfg)
	}
	logs := &testenv.SyncBuffer{}
	ch, err := New(cfg, channels.Deps{Config: cfg, Workspace: t.TempDir(), Seen: seen,
		Log: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	require.NoError(t, err)
	h := &harness{t: t, cfg: cfg, peer: peer, ch: ch, logs: logs, Publisher: channeltest.NewPublisher(t)}
	ctx, cancel := context.WithCancel(context.Background())
	require.NoError(t, ch.Start(ctx, h.Publish))
	t.Cleanup(func() {
		stopCtx, done := context.WithTimeout(context.Background(), 10*time.Second)
		defer done()
		require.NoError(t, ch.Stop(stopCtx))
		cancel()
		if t.Failed() {
			t.Logf("channel log:\n%s", logs.String())
		}
	})
	require.Eventually(t, func() bool { return peer.Connections() == 1 }, 10*time.Second, 10*time.Millisecond)
	peer.Hello()
	return h
}

func TestMentionBecomesThreadedInbound(t *testing.T) {
	h := startHarness(t, nil)
	h.peer.Push("env-1", "Ev1", 0, slackpeer.AppMention("C1", "U1", "1700000000.000100", "", "<@"+peerBot+"> what is 2 &lt; 3?"))
	got := h.WaitPublished(1)[0]
	require.Equal(t, protocol.Route{Channel: "slack", ChatID: "C1", ThreadID: "1700000000.000100", SenderID: "U1"}, got.Route)
	require.Equal(t, "what is 2 < 3?", got.Content)
	require.True(t, got.Group)
	require.Equal(t, protocol.Within("1700000000.000100"), got.Scope, "a top-level mention opens a thread, a session of its own (nanobot)")
	require.Empty(t, got.SessionKey, "the manager names the session")
	require.Equal(t, messageID("C1", "1700000000.000100"), got.ID)
	require.Contains(t, h.peer.Reactions(), slackpeer.Reaction{Op: "add", Name: "eyes", Channel: "C1", TS: "1700000000.000100"})
}

func TestRedeliveredEventIsTakenInOnce(t *testing.T) {
	h := startHarness(t, nil)
	ev := slackpeer.AppMention("C1", "U1", "1700000000.000100", "", "<@"+peerBot+"> hello")
	h.peer.Push("env-1", "Ev1", 0, ev)
	h.WaitPublished(1)
	h.peer.Push("env-1", "Ev1", 0, ev) // the same envelope again
	h.peer.Push("env-2", "Ev1", 1, ev) // Slack's redelivery: new envelope, same event
	// Slack's message copy of the mention, a different event for the same message:
	h.peer.Push("env-3", "Ev2", 0, slackpeer.MessageEvent("C1", "channel", "U1", "1700000000.000100", "", "<@"+peerBot+"> hello"))
	h.peer.Push("env-4", "Ev3", 0, slackpeer.AppMention("C1", "U1", "1700000000.000200", "", "<@"+peerBot+"> next"))
	got := h.WaitPublished(2)
	require.Len(t, got, 2, "one message per Slack message")
	require.Equal(t, "next", got[1].Content)
	require.Equal(t, []string{"env-1", "env-1", "env-2", "env-3", "env-4"}, h.peer.Acks(), "every envelope acknowledged")
}

func TestThreadMessageGetsThreadSessionAndContext(t *testing.T) {
	h := startHarness(t, nil)
	h.peer.SetReplies("C1", "100.000001",
		map[string]any{"type": "message", "user": "U2", "ts": "100.000001", "text": "the build is red &amp; nobody knows why"},
		map[string]any{"type": "message", "user": peerBot, "ts": "100.000002", "text": "I can look"},
		map[string]any{"type": "message", "subtype": "channel_join", "user": "U3", "ts": "100.000003", "text": "joined"},
		map[string]any{"type": "message", "user": "U1", "ts": "100.000009", "text": "<@" + peerBot + "> why?"},
	)
	h.peer.Push("env-1", "Ev1", 0, slackpeer.AppMention("C1", "U1", "100.000009", "100.000001", "<@"+peerBot+"> why?"))
	got := h.WaitPublished(1)[0]
	require.Equal(t, protocol.Within("100.000001"), got.Scope, "the thread's session")
	require.Empty(t, got.SessionKey, "the manager names the session")
	require.Equal(t, "100.000001", got.Route.ThreadID)
	require.Equal(t, "Slack thread context before this mention:\n"+
		"- <@U2>: the build is red & nobody knows why\n"+
		"- bot: I can look\n\n"+
		"Current message:\nwhy?", got.Content)

	h.peer.Push("env-2", "Ev2", 0, slackpeer.AppMention("C1", "U1", "100.000010", "100.000001", "<@"+peerBot+"> and now?"))
	require.Equal(t, "and now?", h.WaitPublished(2)[1].Content, "the thread's context is given once")
}

// TestManagerNamesThreadSessions: behind the real gate with
// unifiedSession on, a thread keeps its own session (nanobot: the
// channel's override wins) and a top-level DM joins the unified one.
func TestManagerNamesThreadSessions(t *testing.T) {
	h := startHarness(t, nil)
	b := behindManager(t, h, true, "U1")
	h.peer.Push("env-1", "Ev1", 0, slackpeer.AppMention("C1", "U1", "100.000009", "100.000001", "<@"+peerBot+"> why?"))
	h.peer.Push("env-2", "Ev2", 0, slackpeer.MessageEvent("D1", "im", "U1", "200.000001", "", "hello there"))
	require.Eventually(t, func() bool { return len(b.Admitted()) == 2 }, 10*time.Second, 10*time.Millisecond)
	require.Equal(t, "slack:C1:100.000001", b.Admitted()[0].SessionKey)
	require.Equal(t, channels.UnifiedSessionKey, b.Admitted()[1].SessionKey)
}

func TestDirectMessages(t *testing.T) {
	h := startHarness(t, nil)
	h.peer.Push("env-1", "Ev1", 0, slackpeer.MessageEvent("D1", "im", "U1", "200.000001", "", "hello there"))
	got := h.WaitPublished(1)[0]
	require.Equal(t, protocol.Route{Channel: "slack", ChatID: "D1", SenderID: "U1"}, got.Route, "a top-level DM is answered at top level")
	require.Nil(t, got.Scope, "a top-level DM has the chat's session (or the unified one)")
	require.False(t, got.Group)
	require.Equal(t, "hello there", got.Content)
}

func TestDirectMessagesDisabledAndPlainChannelMessagesIgnored(t *testing.T) {
	h := startHarness(t, func(c *config.Config) {
		require.NoError(t, c.SetChannelBlock(Name, map[string]any{"dm": map[string]any{"enabled": false}}))
	})
	h.peer.Push("env-1", "Ev1", 0, slackpeer.MessageEvent("D1", "im", "U1", "200.000001", "", "hello there"))
	h.peer.Push("env-2", "Ev2", 0, slackpeer.MessageEvent("C1", "channel", "U1", "200.000002", "", "chatter"))
	h.peer.Push("env-3", "Ev3", 0, slackpeer.AppMention("C1", "U1", "200.000003", "", "<@"+peerBot+"> ping"))
	got := h.WaitPublished(1)
	require.Len(t, got, 1)
	require.Equal(t, "ping", got[0].Content, "only the mention got through")
}

func TestMalformedEnvelopesAreAcknowledgedAndDropped(t *testing.T) {
	h := startHarness(t, nil)
	h.peer.PushAcked("bad-1", `{"type":"events_api","envelope_id":"bad-1","payload":"not an object"}`)
	h.peer.PushAcked("bad-2", `{"type":"events_api","envelope_id":"bad-2","payload":{"type":"event_callback","event_id":"EvX","event":{"type":"message","channel":"D1","user":"U1","ts":"1.2","text":42}}}`)
	h.peer.PushAcked("bad-3", `{"type":"events_api","envelope_id":"bad-3","payload":{"type":"event_callback","event":{"type":"app_mention"}}}`)
	h.peer.Push("env-1", "Ev1", 0, slackpeer.MessageEvent("D1", "im", "U1", "300.000001", "", "still alive?"))
	got := h.WaitPublished(1)
	require.Len(t, got, 1)
	require.Equal(t, "still alive?", got[0].Content)
}

func TestRefusedMessageGetsNoReaction(t *testing.T) {
	h := startHarness(t, nil)
	h.Refuse("U9")
	h.peer.Push("env-1", "Ev1", 0, slackpeer.MessageEvent("D1", "im", "U9", "400.000001", "", "let me in"))
	// Events are handled in order: once the next one is in, the refused one was handled.
	h.peer.Push("env-2", "Ev2", 0, slackpeer.MessageEvent("D1", "im", "U1", "400.000002", "", "hello"))
	require.Eventually(t, func() bool { return len(h.Published()) == 1 }, 10*time.Second, 10*time.Millisecond)
	require.Equal(t, []slackpeer.Reaction{{Op: "add", Name: "eyes", Channel: "D1", TS: "400.000002"}}, h.peer.Reactions(),
		"only the admitted message is acknowledged")
}

func TestSharedFileIsDownloadedIntoTheWorkspace(t *testing.T) {
	h := startHarness(t, nil)
	url := h.peer.ServeFile("notes.txt", "buy milk")
	ev := slackpeer.MessageEvent("D1", "im", "U1", "500.000001", "", "read this")
	ev["subtype"] = "file_share"
	ev["files"] = []map[string]any{
		{"id": "F1", "name": "notes.txt", "mimetype": "text/plain", "size": 8, "url_private_download": url},
		{"id": "F2", "name": "gone.png", "mimetype": "image/png", "size": 8, "url_private_download": h.peer.APIURL() + "peer-files/gone.png"},
	}
	h.peer.Push("env-1", "Ev1", 0, ev)
	got := h.WaitPublished(1)[0]
	require.Len(t, got.Media, 1)
	data, err := os.ReadFile(got.Media[0])
	require.NoError(t, err)
	require.Equal(t, "buy milk", string(data))
	require.Equal(t, filepath.Join(h.ch.workspace, "media", "slack-F1-notes.txt"), got.Media[0])
	require.True(t, strings.HasPrefix(got.Content, "read this\n[file: notes.txt]\n[image: gone.png: download failed;"), got.Content)
}

func reply(turn, chat, thread, text string, ids ...string) channels.Reply {
	return channels.Reply{Route: protocol.Route{Channel: "slack", ChatID: chat, ThreadID: thread}, Turn: turn,
		Text: text, MessageIDs: ids, StopReason: protocol.StopCompleted}
}

func TestSendPostsMrkdwnInTheThreadOnceAndSwapsReactions(t *testing.T) {
	h := startHarness(t, nil)
	ctx := context.Background()
	r := reply("turn-1", "C1", "600.000001", "**Four**, see [docs](https://e.com)", messageID("C1", "600.000001"), messageID("C1", "600.000002"))
	var progress channels.Progress
	attempt := func() context.Context {
		return channels.WithProgress(ctx, progress, func(p channels.Progress) error { progress = p; return nil })
	}
	require.NoError(t, channels.Deliver(attempt(), h.ch, r))
	require.NoError(t, channels.Deliver(attempt(), h.ch, r), "a retried delivery")
	require.Eventually(t, func() bool { return len(h.peer.Posts()) >= 1 }, 10*time.Second, 10*time.Millisecond)
	// A later post proves no second copy is on its way.
	require.NoError(t, channels.Deliver(ctx, h.ch, reply("turn-2", "C1", "600.000001", "next")))
	require.Eventually(t, func() bool { return len(h.peer.Posts()) >= 2 }, 10*time.Second, 10*time.Millisecond)
	posts := h.peer.Posts()
	require.Len(t, posts, 2)
	require.Equal(t, slackpeer.Message{Channel: "C1", TS: posts[0].TS, ThreadTS: "600.000001", Text: "*Four*, see <https://e.com|docs>"}, posts[0])
	require.Equal(t, "next", posts[1].Text)
	reactions := h.peer.Reactions()
	require.Contains(t, reactions, slackpeer.Reaction{Op: "remove", Name: "eyes", Channel: "C1", TS: "600.000001"})
	require.Contains(t, reactions, slackpeer.Reaction{Op: "add", Name: "white_check_mark", Channel: "C1", TS: "600.000001"})
	require.Contains(t, reactions, slackpeer.Reaction{Op: "add", Name: "white_check_mark", Channel: "C1", TS: "600.000002"})
}

func TestSendSplitsLongReplies(t *testing.T) {
	h := startHarness(t, nil)
	long := strings.Repeat("a sentence of words. ", 2500) // 52 500 chars
	require.NoError(t, channels.Deliver(context.Background(), h.ch, reply("turn-1", "C1", "", long)))
	require.Eventually(t, func() bool { return len(h.peer.Posts()) == 2 }, 10*time.Second, 10*time.Millisecond)
	posts := h.peer.Posts()
	require.LessOrEqual(t, len([]rune(posts[0].Text)), MaxMessageLen)
	require.Equal(t, strings.Fields(long), strings.Fields(posts[0].Text+" "+posts[1].Text))
}

func TestSendUploadsMediaInTheThread(t *testing.T) {
	h := startHarness(t, nil)
	require.NoError(t, os.WriteFile(filepath.Join(h.ch.workspace, "chart.csv"), []byte("a,b\n1,2\n"), 0o644))
	r := reply("turn-1", "C1", "700.000001", "here it is")
	r.Media = []string{"chart.csv", "missing.png"}
	require.NoError(t, channels.Deliver(context.Background(), h.ch, r))
	require.Equal(t, []slackpeer.Upload{{Name: "chart.csv", Content: "a,b\n1,2\n", Channel: "C1", ThreadTS: "700.000001"}}, h.peer.Uploads())
	require.Eventually(t, func() bool { return len(h.peer.Posts()) == 2 }, 10*time.Second, 10*time.Millisecond)
	require.Equal(t, "_(file not sent: missing.png)_", h.peer.Posts()[0].Text, "files first, as on every channel")
	require.Equal(t, "here it is", h.peer.Posts()[1].Text)
}

// publish publishes events of one turn in one thread, as the model and
// tool activities do, to a manager drawing the channel's streams.
func publish(m channeltest.Managed, turn string, route protocol.Route, evs ...channels.StreamEvent) {
	for _, ev := range evs {
		ev.SessionKey, ev.Turn, ev.Route = "slack:"+route.ChatID, turn, route
		if ev.Iteration == 0 {
			ev.Iteration = 1
		}
		m.SendDelta(context.Background(), ev)
	}
}

func TestStreamPostsThenEditsAndTheFinalReplyEditsIt(t *testing.T) {
	h := startHarness(t, nil)
	m := channeltest.Manage(t, h.cfg, h.ch)
	route := protocol.Route{Channel: "slack", ChatID: "C1", ThreadID: "800.000001"}
	publish(m, "turn-1", route, channels.StreamEvent{Delta: "Hello"})
	require.Eventually(t, func() bool { return len(h.peer.Posts()) == 1 }, 10*time.Second, 10*time.Millisecond)
	first := h.peer.Posts()[0]
	require.Equal(t, slackpeer.Message{Channel: "C1", TS: first.TS, ThreadTS: "800.000001", Text: "Hello"}, first)
	publish(m, "turn-1", route, channels.StreamEvent{Delta: " **world**"})
	require.Eventually(t, func() bool {
		shown, _ := h.peer.Shown("C1", first.TS)
		return shown == "Hello *world*"
	}, 10*time.Second, 10*time.Millisecond, "edited at most a second later")
	publish(m, "turn-1", route, channels.StreamEvent{End: true})

	r := reply("turn-1", "C1", "800.000001", "Hello **world**!", messageID("C1", "800.000001"))
	require.NoError(t, m.Send(context.Background(), r))
	shown, _ := h.peer.Shown("C1", first.TS)
	require.Equal(t, "Hello *world*!", shown, "the final reply edits the streamed message")
	require.Contains(t, h.peer.Reactions(), slackpeer.Reaction{Op: "add", Name: "white_check_mark", Channel: "C1", TS: "800.000001"},
		"an answer that took the streamed message over is done too")
	require.NoError(t, m.Send(context.Background(), reply("turn-2", "C1", "800.000001", "later")))
	require.Eventually(t, func() bool { return len(h.peer.Posts()) == 2 }, 10*time.Second, 10*time.Millisecond)
	require.Equal(t, "later", h.peer.Posts()[1].Text, "no second copy of the streamed reply was posted")
}

func TestStreamWithToolsPutsHintsAndTheAnswerInTheirOwnMessages(t *testing.T) {
	h := startHarness(t, nil)
	m := channeltest.Manage(t, h.cfg, h.ch)
	route := protocol.Route{Channel: "slack", ChatID: "C1", ThreadID: "900.000001"}
	publish(m, "turn-1", route, channels.StreamEvent{Delta: "Let me look."}, channels.StreamEvent{End: true},
		channels.StreamEvent{ToolHint: "read_file README.md"})
	require.Eventually(t, func() bool { return len(h.peer.Posts()) == 2 }, 10*time.Second, 10*time.Millisecond)
	require.Equal(t, "↳ `read_file README.md`", h.peer.Posts()[1].Text)
	publish(m, "turn-1", route, channels.StreamEvent{Iteration: 2, Delta: "It says hi."}, channels.StreamEvent{Iteration: 2, Reset: true},
		channels.StreamEvent{Iteration: 2, Delta: "It says hello."})
	require.Eventually(t, func() bool {
		posts := h.peer.Posts()
		if len(posts) != 3 {
			return false
		}
		shown, _ := h.peer.Shown("C1", posts[2].TS)
		return shown == "It says hello."
	}, 10*time.Second, 10*time.Millisecond, "the answer after the tools is a new message; the reset dropped the retried text")
	answer := h.peer.Posts()[2]
	require.NoError(t, m.Send(context.Background(), reply("turn-1", "C1", "900.000001", "It says hello.")))
	shown, _ := h.peer.Shown("C1", answer.TS)
	require.Equal(t, "It says hello.", shown)
	first, _ := h.peer.Shown("C1", h.peer.Posts()[0].TS)
	require.Equal(t, "Let me look.", first, "the text before the tools stays")
	require.Len(t, h.peer.Posts(), 3)
}

// TestWhatIsDrawnFollowsTheSettings: a turn says "Let me look.", runs a
// tool, then answers. channels.sendProgress off draws none of the model's
// text (the answer is posted once, never edited), sendToolHints off no hint.
func TestWhatIsDrawnFollowsTheSettings(t *testing.T) {
	for name, tc := range map[string]struct {
		edit         func(*config.Config)
		posts, edits []string
	}{
		"default":           {nil, []string{"Let me look.", "↳ `exec ls`", "Two files"}, []string{"Two files."}},
		"sendProgress off":  {func(c *config.Config) { c.Channels.SendProgress = false }, []string{"↳ `exec ls`", "Two files."}, nil},
		"sendToolHints off": {func(c *config.Config) { c.Channels.SendToolHints = false }, []string{"Let me look.", "Two files"}, []string{"Two files."}},
	} {
		t.Run(name, func(t *testing.T) {
			h := startHarness(t, tc.edit)
			m := channeltest.Manage(t, h.cfg, h.ch)
			route := protocol.Route{Channel: "slack", ChatID: "C1", ThreadID: "970.000001"}
			publish(m, "turn-1", route, channels.StreamEvent{Delta: "Let me look."}, channels.StreamEvent{ToolHint: "exec ls"},
				channels.StreamEvent{Iteration: 2, Delta: "Two files"})
			require.NoError(t, m.Send(context.Background(), reply("turn-1", "C1", "970.000001", "Two files.")))
			var posts, edits []string
			for _, p := range h.peer.Posts() {
				posts = append(posts, p.Text)
			}
			for _, u := range h.peer.Updates() {
				edits = append(edits, u.Text)
			}
			require.Equal(t, tc.posts, posts)
			require.Equal(t, tc.edits, edits)
		})
	}
}

func TestMessageToolTargetsByName(t *testing.T) {
	h := startHarness(t, nil)
	h.peer.AddChannel("C0GENERAL", "general")
	h.peer.AddUser("U0BOB", "bob", "Bobby")
	ctx := context.Background()
	send := func(chat string) error {
		return channels.Deliver(ctx, h.ch, channels.Reply{Route: protocol.Route{Channel: "slack", ChatID: chat, ThreadID: "1.000001"},
			Turn: "turn-1/call-" + chat, Text: "to " + chat, Kind: protocol.ReplyMessage})
	}
	for _, chat := range []string{"#general", "<#C0GENERAL|general>", "C0GENERAL", "@bobby", "<@U0BOB>", "U0BOB", "bob"} {
		require.NoError(t, send(chat), chat)
	}
	var got []string
	for _, p := range h.peer.Posts() {
		got = append(got, p.Channel+" "+p.ThreadTS+" "+p.Text)
	}
	require.Equal(t, []string{
		"C0GENERAL  to #general", "C0GENERAL  to <#C0GENERAL|general>", "C0GENERAL 1.000001 to C0GENERAL",
		"DU0BOB  to @bobby", "DU0BOB  to <@U0BOB>", "DU0BOB  to U0BOB", "DU0BOB  to bob",
	}, got, "a named chat gets its id and loses a thread that cannot be there")
	err := send("#nowhere")
	var se *channels.SendError
	require.ErrorAs(t, err, &se)
	require.True(t, se.Permanent)
	require.Contains(t, err.Error(), `"#nowhere" is neither a channel the bot is in nor a user`)
}
