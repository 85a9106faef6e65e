package integration

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels/qq/qqpeer"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// Openids of the QQ conversation.
const (
	qqAlice = "A1B2C3D4E5F60718293A4B5C6D7E8F90"
	qqBob   = "B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0"
	qqGroup = "C0FFEE00C0FFEE00C0FFEE00C0FFEE00"
)

// qqContents are the texts the bot posted to a chat, in order.
func qqContents(peer *qqpeer.Peer, chat string) []string {
	var out []string
	for _, m := range peer.Messages(chat) {
		out = append(out, m.Content)
	}
	return out
}

// startQQ runs the gateway against a fresh peer, Alice allowed, and waits
// for the bot to identify.
func startQQ(t *testing.T, model *modeltest.Server) (*qqpeer.Peer, *testenv.Home, []string, outputs) {
	t.Helper()
	dev := testenv.StartDevServer(t)
	peer := qqpeer.New(t)
	home := testenv.NewHome(t, model.URL(), map[string]any{"channels": map[string]any{"qq": map[string]any{
		"enabled": true, "appId": qqpeer.AppID, "secret": qqpeer.Secret,
		"apiBase": peer.URL(), "authBase": peer.URL(), "allowFrom": []string{qqAlice}}}})
	env := home.Env(dev.Addr)
	logs := startChannelGateway(t, env, "qq")
	require.Eventually(t, peer.Connected, time.Minute, 50*time.Millisecond, "the gateway never identified\n%s", logs)
	return peer, home, env, logs
}

// qqRepliesTo are the texts the bot posted to chat as replies to message id.
func qqRepliesTo(peer *qqpeer.Peer, chat, id string) []string {
	var out []string
	for _, m := range peer.Messages(chat) {
		if m.MsgID == id {
			out = append(out, m.Content)
		}
	}
	return out
}

// TestQQGatewayConversation drives the real gateway binary through qqpeer:
// a C2C message is acknowledged and answered as a passive reply; a group
// message that does not mention the bot is left alone; an @-mention gets a
// tool round trip and its answer in the group, in the group's session.
func TestQQGatewayConversation(t *testing.T) {
	model := noteTaker("from qq", map[string]string{"hi from qq": "Hello, **QQ**."})
	defer model.Close()
	peer, home, env, logs := startQQ(t, model)
	require.Contains(t, logs.String(), "  qq: "+qqpeer.BotName)

	hi := peer.C2C(qqAlice, "hi from qq")
	require.Eventually(t, func() bool {
		c := qqContents(peer, qqAlice)
		return len(c) == 2 && c[1] == "Hello, QQ."
	}, time.Minute, 50*time.Millisecond, "no answer to the C2C message: %v\n%s", qqContents(peer, qqAlice), logs)
	msgs := peer.Messages(qqAlice)
	require.Equal(t, "⏳ Processing...", msgs[0].Content, "nanobot's ackMessage comes first")
	for i, m := range msgs {
		require.Equal(t, hi, m.MsgID, "a passive reply to the user's message")
		require.Equal(t, i+1, m.MsgSeq, "a new msg_seq for each message to one msg_id")
	}
	requireChannelsUp(t, env, "qq")

	peer.Group(qqGroup, qqAlice, "just chatting")
	at := peer.GroupAt(qqGroup, qqAlice, "please save a note")
	require.Eventually(t, func() bool {
		c := qqContents(peer, qqGroup)
		return len(c) >= 2 && c[len(c)-1] == "Saved it to note.txt."
	}, time.Minute, 50*time.Millisecond, "no answer to the mention: %v\n%s", qqContents(peer, qqGroup), logs)
	for i, m := range peer.Messages(qqGroup) {
		require.True(t, m.Group, "posted to /v2/groups")
		require.Equal(t, at, m.MsgID)
		require.Equal(t, i+1, m.MsgSeq)
	}
	data, err := os.ReadFile(filepath.Join(home.Workspace, "note.txt"))
	require.NoError(t, err)
	require.Equal(t, "from qq", string(data))
	require.Equal(t, 3, model.Count(), "the C2C message, the mention and its tool result; the chatter never reached the model")

	_, lines := sessionLines(t, home, "qq:"+qqGroup)
	require.Equal(t, "please save a note", lines[0].Content)
	_, lines = sessionLines(t, home, "qq:"+qqAlice)
	require.Equal(t, "hi from qq", lines[0].Content)
}

// TestQQGatewayPairsAStranger: a C2C message from someone not in
// allowFrom is answered with a pairing code and never reaches the model.
func TestQQGatewayPairsAStranger(t *testing.T) {
	model := answering(map[string]string{"hi from alice": "Hello, Alice."})
	defer model.Close()
	peer, _, _, logs := startQQ(t, model)

	knock := peer.C2C(qqBob, "let me in")
	require.Eventually(t, func() bool {
		c := qqRepliesTo(peer, qqBob, knock)
		return len(c) > 0 && strings.Contains(c[len(c)-1], "Your pairing code is ")
	}, time.Minute, 50*time.Millisecond, "no pairing code: %v\n%s", qqContents(peer, qqBob), logs)
	hi := peer.C2C(qqAlice, "hi from alice")
	require.Eventually(t, func() bool { return slices.Contains(qqRepliesTo(peer, qqAlice, hi), "Hello, Alice.") },
		time.Minute, 50*time.Millisecond, "no answer to Alice: %v\n%s", qqContents(peer, qqAlice), logs)
	require.Equal(t, 1, model.Count(), "only Alice's message reached the model")
	require.Len(t, qqContents(peer, qqBob), 1, "the stranger got the pairing code only")
}

// TestQQGatewayResumesAfterADrop: the gateway closes the connection; the
// channel resumes its session; QQ redelivers the last message under a new
// seq and dispatches a new one: the new one is answered, the redelivered
// one not again.
func TestQQGatewayResumesAfterADrop(t *testing.T) {
	model := answering(map[string]string{"before the drop": "Before.", "after the drop": "After."})
	defer model.Close()
	peer, _, _, logs := startQQ(t, model)

	before := peer.C2C(qqAlice, "before the drop")
	require.Eventually(t, func() bool { return slices.Contains(qqRepliesTo(peer, qqAlice, before), "Before.") },
		time.Minute, 50*time.Millisecond, "no answer before the drop: %v\n%s", qqContents(peer, qqAlice), logs)
	peer.CloseGateway(4009) // 4009: the session timed out; resumable
	require.Eventually(t, func() bool { return peer.Stats().Resumes == 1 && peer.Connected() }, time.Minute, 50*time.Millisecond,
		"the channel never resumed\n%s", logs)

	peer.Redeliver(before)
	after := peer.C2C(qqAlice, "after the drop")
	require.Eventually(t, func() bool { return slices.Contains(qqRepliesTo(peer, qqAlice, after), "After.") },
		time.Minute, 50*time.Millisecond, "no answer after the drop: %v\n%s", qqContents(peer, qqAlice), logs)
	require.Equal(t, 2, model.Count(), "the redelivered message never reached the model again")
	require.Equal(t, []string{"⏳ Processing...", "Before."}, qqRepliesTo(peer, qqAlice, before), "acked and answered once")
	require.Equal(t, []string{"⏳ Processing...", "After."}, qqRepliesTo(peer, qqAlice, after))
	require.Equal(t, 1, peer.Stats().Identifies, "resumed, not identified anew")
}
