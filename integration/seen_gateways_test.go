package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels/slack/slackpeer"
	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/internal/pgtest"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/pgstore"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// The chat and the two mentions every run below delivers.
const (
	seenChannel  = "C0SEEN001"
	seenAlice    = "U0ALICE01"
	seenFirstTS  = "1700000100.000100"
	seenSecondTS = "1700000200.000100"
	seenFirst    = "first question"
	seenSecond   = "second question"
)

// slackGateways are two `nanobot gateway` processes with HOMEs of their own
// on one temporal-dev, connected to one Slack app: gateway i holds the
// app's Socket Mode connection i.
type slackGateways struct {
	peer  *slackpeer.Peer
	model *modeltest.Server
	homes [2]*testenv.Home
	logs  [2]outputs
}

// startSlackGateways starts both gateways, each with its config's extra
// keys and its command-line flags, and waits until both are connected.
func startSlackGateways(t *testing.T, extra [2]map[string]any, flags [2][]string) *slackGateways {
	t.Helper()
	dev := testenv.StartDevServer(t)
	g := &slackGateways{peer: slackpeer.New(t), model: answering(map[string]string{
		seenFirst: "First answer.", seenSecond: "Second answer.",
	})}
	t.Cleanup(g.model.Close)
	for i := range g.homes {
		cfg := map[string]any{"channels": map[string]any{"slack": map[string]any{
			"enabled": true, "botToken": "xoxb-seen", "appToken": "xapp-seen", "apiBase": g.peer.APIURL(),
			"allowFrom": []string{seenAlice},
		}}}
		for k, v := range extra[i] {
			cfg[k] = v
		}
		g.homes[i] = testenv.NewHome(t, g.model.URL(), cfg)
		// Streamed: the gateway that ran the model call draws the stream, and
		// whichever takes the delivery edits that post into the answer.
		_, out, errOut := startNanobot(t, g.homes[i].Env(dev.Addr, "NANOBOT_LOG_LEVEL=info"), append([]string{"gateway"}, flags[i]...)...)
		g.logs[i] = outputs{out, errOut}
		require.Eventually(t, func() bool { return g.peer.Connections() == i+1 }, 90*time.Second, 50*time.Millisecond,
			"gateway %d never opened its Socket Mode connection:\n%s", i, g.logs[i])
		g.peer.HelloTo(i)
		require.Eventually(t, func() bool { return strings.Contains(g.logs[i].String(), "slack: Socket Mode, @") }, 30*time.Second, 50*time.Millisecond,
			"gateway %d never came up:\n%s", i, g.logs[i])
	}
	return g
}

// deliverEachTwice is Slack redelivering two events to the other gateway:
// the first to both connections at once (a retry racing the first delivery),
// the second to gateway 1, and once that is answered, its retry to gateway 0.
func (g *slackGateways) deliverEachTwice(t *testing.T) {
	t.Helper()
	first := slackpeer.AppMention(seenChannel, seenAlice, seenFirstTS, "", "<@"+slackpeer.BotUserID+"> "+seenFirst)
	g.peer.PushTo(0, "env-1", "Ev0001", 0, first)
	g.peer.PushTo(1, "env-2", "Ev0001", 1, first)

	second := slackpeer.AppMention(seenChannel, seenAlice, seenSecondTS, "", "<@"+slackpeer.BotUserID+"> "+seenSecond)
	g.peer.PushTo(1, "env-3", "Ev0002", 0, second)
	g.waitPosts(t, seenSecondTS, 1)
	waitSlackDone(t, g.peer, seenChannel, seenSecondTS)
	g.peer.PushTo(0, "env-4", "Ev0002", 1, second)
}

// waitPosts waits until the bot posted at least n replies in the thread of ts.
func (g *slackGateways) waitPosts(t *testing.T, ts string, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return len(slackThreadPosts(g.peer, seenChannel, ts)) >= n }, 90*time.Second, 50*time.Millisecond,
		"fewer than %d replies to %s; gateway 0:\n%s\ngateway 1:\n%s", n, ts, g.logs[0], g.logs[1])
}

// dropped reports whether gateway i logged that it dropped eventID as taken in already.
func (g *slackGateways) dropped(i int, eventID string) bool {
	for _, line := range strings.Split(g.logs[i].String(), "\n") {
		if strings.Contains(line, "slack event redelivered; already taken in") && strings.Contains(line, "event_id="+eventID) {
			return true
		}
	}
	return false
}

// userTurns counts the user messages in msgs that say text.
func userTurns(msgs []chat.Message, text string) int {
	n := 0
	for _, m := range msgs {
		if m.Role == "user" && m.Content == text {
			n++
		}
	}
	return n
}

// TestSlackRedeliveryToAnotherGatewayIsTakenInOnce: two gateways on one
// PostgreSQL database share the dedupe set, so an event Slack delivers to
// both of them — at once, or retried on the other connection after it was
// answered — is answered once, and the journal (read from PostgreSQL) holds
// it once.
func TestSlackRedeliveryToAnotherGatewayIsTakenInOnce(t *testing.T) {
	url := pgtest.Database(t)
	onDB := map[string]any{"database": map[string]any{"url": url}}
	g := startSlackGateways(t, [2]map[string]any{onDB, onDB}, [2][]string{nil, {"--workspace=false"}})
	g.deliverEachTwice(t)

	require.Eventually(t, func() bool { return g.dropped(0, "Ev0001") || g.dropped(1, "Ev0001") }, 30*time.Second, 20*time.Millisecond,
		"neither gateway dropped the first event's second delivery; gateway 0:\n%s\ngateway 1:\n%s", g.logs[0], g.logs[1])
	require.Eventually(t, func() bool { return g.dropped(0, "Ev0002") }, 30*time.Second, 20*time.Millisecond,
		"gateway 0 took in the retry of an event gateway 1 had answered:\n%s", g.logs[0])
	g.waitPosts(t, seenFirstTS, 1)
	waitSlackDone(t, g.peer, seenChannel, seenFirstTS)

	require.Equal(t, []string{"First answer."}, g.shown(seenFirstTS), "the first event answered once")
	require.Equal(t, []string{"Second answer."}, g.shown(seenSecondTS), "the second event answered once")
	require.Equal(t, 2, g.model.Count(), "the model was asked once per event")

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db, err := pgstore.Open(ctx, url, nil)
	require.NoError(t, err)
	defer db.Close()
	for ts, text := range map[string]string{seenFirstTS: seenFirst, seenSecondTS: seenSecond} {
		sess, err := db.Sessions().Load(ctx, seenSession(ts)) // each mention opens a thread, its own session
		require.NoError(t, err)
		require.Equal(t, 1, userTurns(sess.Messages, text), "the journal holds %q once: %v", text, slackRoles(sess.Messages))
	}
}

// seenSession is the session of a top-level mention: the thread it opens.
func seenSession(ts string) string { return "slack:" + seenChannel + ":" + ts }

// TestSlackRedeliveryToSeparateHomesIsAnsweredTwice is the negative
// control: the same deliveries to two gateways that keep their state in
// their own homes are answered twice, once by each, so the test above
// detects a dedupe that is not shared. Each is its own instance: on one
// instance the two homes would also split each turn's journal, and the run
// would fail for that instead.
func TestSlackRedeliveryToSeparateHomesIsAnsweredTwice(t *testing.T) {
	g := startSlackGateways(t, [2]map[string]any{
		{"gateway": map[string]any{"instance": "seen-a"}},
		{"gateway": map[string]any{"instance": "seen-b"}},
	}, [2][]string{})
	g.deliverEachTwice(t)

	g.waitPosts(t, seenFirstTS, 2)
	g.waitPosts(t, seenSecondTS, 2)
	require.False(t, g.dropped(0, "Ev0001") || g.dropped(1, "Ev0001") || g.dropped(0, "Ev0002"), "a gateway saw the other's keys")
	require.Equal(t, 4, g.model.Count(), "each gateway asked the model about each event")
	for i, h := range g.homes { // a reply is sent after its turn is journaled
		_, msgs := sessionLines(t, h, seenSession(seenFirstTS))
		require.Equal(t, 1, userTurns(msgs, seenFirst), "gateway %d's journal: %v", i, slackRoles(msgs))
		_, msgs = sessionLines(t, h, seenSession(seenSecondTS))
		require.Equal(t, 1, userTurns(msgs, seenSecond), "gateway %d's journal: %v", i, slackRoles(msgs))
	}
	t.Logf("separate homes: each event answered %d and %d times, journaled once in each home",
		len(g.shown(seenFirstTS)), len(g.shown(seenSecondTS)))
}

// shown is what the bot's replies in the thread of ts say now (a streamed
// post shows its final edit).
func (g *slackGateways) shown(ts string) []string {
	var out []string
	for _, m := range slackThreadPosts(g.peer, seenChannel, ts) {
		text, _ := g.peer.Shown(seenChannel, m.TS)
		out = append(out, text)
	}
	return out
}
