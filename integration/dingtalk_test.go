package integration

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels/dingtalk/dingtalkpeer"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// The people and the group of the DingTalk conversation.
var (
	dingAlice = dingtalkpeer.User{StaffID: "staff-alice", Nick: "Alice"}
	dingBob   = dingtalkpeer.User{StaffID: "staff-bob", Nick: "Bob"}
)

const dingTeam = "cidTEAM0001"

// startDingTalk runs the gateway against a fresh peer, Alice allowed, and
// waits for the stream.
func startDingTalk(t *testing.T, model *modeltest.Server) (*dingtalkpeer.Peer, *testenv.Home, []string, outputs) {
	t.Helper()
	dev := testenv.StartDevServer(t)
	peer := dingtalkpeer.New(t)
	home := testenv.NewHome(t, model.URL(), map[string]any{"channels": map[string]any{"dingtalk": map[string]any{
		"enabled": true, "clientId": dingtalkpeer.ClientID, "clientSecret": dingtalkpeer.ClientSecret,
		"apiBase": peer.URL(), "allowFrom": []string{dingAlice.StaffID},
	}}})
	env := home.Env(dev.Addr)
	logs := startChannelGateway(t, env, "dingtalk")
	require.Eventually(t, peer.Connected, time.Minute, 50*time.Millisecond, "the stream never connected\n%s", logs)
	return peer, home, env, logs
}

// TestDingTalkGatewayConversation drives the real gateway binary through
// dingtalkpeer: the stream registers and connects; a DM is answered by
// its sessionWebhook; an unknown sender gets a pairing code; a group
// message that does not @-mention the robot is left alone; a mention is
// answered in the group, naming the sender, in the group's session.
func TestDingTalkGatewayConversation(t *testing.T) {
	model := modeltest.New().Handle(func(req *modeltest.RecordedRequest) modeltest.Step {
		last := req.Messages[len(req.Messages)-1]
		switch {
		case strings.Contains(last.Content, "hi from dingtalk"):
			return modeltest.Text("Hello, **DingTalk**.")
		case strings.Contains(last.Content, "what is 2+2"):
			return modeltest.Text("It is 4.")
		}
		return modeltest.Text("Hello again.")
	})
	defer model.Close()
	peer, home, env, logs := startDingTalk(t, model)
	require.Contains(t, logs.String(), "  dingtalk: app "+dingtalkpeer.ClientID)

	peer.Say(dingtalkpeer.Incoming{From: dingAlice, Text: "hi from dingtalk"})
	require.Eventually(t, func() bool {
		sent := peer.Sent(dingAlice.StaffID)
		return len(sent) == 1 && sent[0].Text == "Hello, **DingTalk**."
	}, time.Minute, 50*time.Millisecond, "no answer to the DM\n%s", logs)
	require.Equal(t, "webhook", peer.Sent(dingAlice.StaffID)[0].Via, "answered by the message's sessionWebhook")
	require.Equal(t, "Nanobot Reply", peer.Sent(dingAlice.StaffID)[0].Title)
	requireChannelsUp(t, env, "dingtalk")

	peer.Say(dingtalkpeer.Incoming{From: dingBob, Text: "let me in"})
	require.Eventually(t, func() bool {
		sent := peer.Sent(dingBob.StaffID)
		return len(sent) == 1 && strings.Contains(sent[0].Text, "pairing code")
	}, time.Minute, 50*time.Millisecond, "no pairing code for the stranger\n%s", logs)

	peer.Say(dingtalkpeer.Incoming{From: dingAlice, Group: dingTeam, Text: "just chatting"})
	peer.Say(dingtalkpeer.Incoming{From: dingAlice, Group: dingTeam, AtRobot: true, Text: " what is 2+2?"})
	group := "group:" + dingTeam
	require.Eventually(t, func() bool { return len(peer.Sent(group)) == 1 }, time.Minute, 50*time.Millisecond,
		"no answer to the mention\n%s", logs)
	require.Equal(t, "# @Alice\n\nIt is 4.", peer.Sent(group)[0].Text)
	require.Equal(t, 2, model.Count(), "the DM and the mention; the chatter and the stranger never reached the model")

	_, msgs := sessionLines(t, home, "dingtalk:"+group)
	require.Equal(t, "what is 2+2?", msgs[0].Content)
	_, msgs = sessionLines(t, home, "dingtalk:"+dingAlice.StaffID)
	require.Equal(t, "hi from dingtalk", msgs[0].Content)
	require.Equal(t, 1, peer.Stats().Connections, "one stream, kept")
}

// TestDingTalkGatewayResumesAfterADrop: the stream socket drops; the
// channel registers and connects anew; DingTalk redelivers the last
// message (the same msgId) and pushes a new one: the new one is answered,
// the redelivered one not again.
func TestDingTalkGatewayResumesAfterADrop(t *testing.T) {
	model := answering(map[string]string{"before the drop": "Before.", "after the drop": "After."})
	defer model.Close()
	peer, _, _, logs := startDingTalk(t, model)
	texts := func() []string {
		var out []string
		for _, s := range peer.Sent(dingAlice.StaffID) {
			out = append(out, s.Text)
		}
		return out
	}

	before := peer.Say(dingtalkpeer.Incoming{From: dingAlice, Text: "before the drop"})
	require.Eventually(t, func() bool { return len(texts()) == 1 }, time.Minute, 50*time.Millisecond, "no answer before the drop\n%s", logs)
	peer.Drop()
	require.Eventually(t, func() bool { return peer.Stats().Connections == 2 && peer.Connected() }, time.Minute, 50*time.Millisecond,
		"the stream never reconnected\n%s", logs)

	peer.Say(dingtalkpeer.Incoming{MsgID: before, From: dingAlice, Text: "before the drop"})
	peer.Say(dingtalkpeer.Incoming{From: dingAlice, Text: "after the drop"})
	require.Eventually(t, func() bool { return len(texts()) >= 2 }, time.Minute, 50*time.Millisecond, "no answer after the drop\n%s", logs)
	require.Equal(t, []string{"Before.", "After."}, texts(), "one answer per message")
	require.Equal(t, 2, model.Count(), "the redelivered message never reached the model again")
	require.Equal(t, 2, peer.Stats().Opens, "a new registration for the new socket")
}
