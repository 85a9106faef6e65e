package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels/feishu/feishupeer"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// The Feishu group of the conversation.
const feishuGroup = "oc_itest_group_01"

var (
	feishuAlice = feishupeer.User{OpenID: "ou_itest_alice_01", UserID: "u_alice", Name: "Alice"}
	feishuBob   = feishupeer.User{OpenID: "ou_itest_bob_01", UserID: "u_bob", Name: "Bob"}
)

// feishuHome is a home with Feishu enabled against the peer.
func feishuHome(t *testing.T, peer *feishupeer.Peer, modelURL string, block map[string]any) *testenv.Home {
	t.Helper()
	b := map[string]any{"enabled": true, "appId": feishupeer.AppID, "appSecret": feishupeer.AppSecret,
		"apiBase": peer.URL(), "allowFrom": []string{feishuAlice.OpenID}}
	for k, v := range block {
		b[k] = v
	}
	return testenv.NewHome(t, modelURL, map[string]any{"channels": map[string]any{"feishu": b}})
}

// startFeishu runs the gateway against a fresh peer, Alice allowed, and
// waits for the long connection; block adds keys to channels.feishu.
func startFeishu(t *testing.T, model *modeltest.Server, block map[string]any) (*feishupeer.Peer, *testenv.Home, []string, outputs) {
	t.Helper()
	dev := testenv.StartDevServer(t)
	peer := feishupeer.New(t)
	home := feishuHome(t, peer, model.URL(), block)
	env := home.Env(dev.Addr)
	logs := startChannelGateway(t, env, "feishu")
	require.Eventually(t, peer.Connected, time.Minute, 50*time.Millisecond, "the gateway never opened the long connection\n%s", logs)
	return peer, home, env, logs
}

// feishuAnswered waits for the n-th message to a chat and returns what it shows.
func feishuAnswered(t *testing.T, peer *feishupeer.Peer, chat string, n int, logs outputs) string {
	t.Helper()
	require.Eventually(t, func() bool { return len(peer.Messages(chat)) >= n }, time.Minute, 50*time.Millisecond,
		"no message %d to %s: %+v\n%s", n, chat, peer.Messages(chat), logs)
	return peer.Messages(chat)[n-1].Text()
}

// TestFeishuGatewayConversation drives the real gateway binary through
// feishupeer's long connection: a DM is answered with a card and the
// reaction goes on and off; a group message without a mention is left
// alone; a mention gets a tool round trip and its answer in the group, in
// the topic's own session.
func TestFeishuGatewayConversation(t *testing.T) {
	model := noteTaker("from feishu", map[string]string{"hi from feishu": "Hello, **Feishu**."})
	defer model.Close()
	peer, home, env, logs := startFeishu(t, model, nil)
	require.Contains(t, logs.String(), "  feishu: "+feishupeer.BotName+" ("+feishupeer.BotOpenID+")")

	hi := peer.Say(feishupeer.Incoming{Sender: feishuAlice, Text: "hi from feishu"})
	require.Eventually(t, func() bool {
		msgs := peer.Messages(feishuAlice.OpenID)
		return len(msgs) == 1 && msgs[0].Text() == "Hello, **Feishu**."
	}, time.Minute, 50*time.Millisecond, "no answer to the DM\n%s", logs)
	require.Equal(t, "interactive", peer.Messages(feishuAlice.OpenID)[0].MsgType, "the answer is a card")
	require.True(t, peer.Acked("frame-"+hi), "the event was acked")
	require.Eventually(t, func() bool {
		r := peer.Reactions(hi)
		return len(r) == 2 && r[0] == "+THUMBSUP" && r[1] == "-THUMBSUP"
	}, 30*time.Second, 50*time.Millisecond, "the reaction went on, then off with the answer")
	requireChannelsUp(t, env, "feishu")

	peer.Say(feishupeer.Incoming{ChatID: feishuGroup, Group: true, Sender: feishuAlice, Text: "just chatting"})
	mention := peer.Say(feishupeer.Incoming{ChatID: feishuGroup, Group: true, Sender: feishuAlice,
		Text: "@_user_1 please save a note", Mentions: []feishupeer.User{feishupeer.Bot}})
	require.Eventually(t, func() bool {
		msgs := peer.Messages(feishuGroup)
		return len(msgs) > 0 && msgs[len(msgs)-1].Text() == "Saved it to note.txt."
	}, time.Minute, 50*time.Millisecond, "no answer to the mention: %+v", peer.Messages(feishuGroup))
	data, err := os.ReadFile(filepath.Join(home.Workspace, "note.txt"))
	require.NoError(t, err)
	require.Equal(t, "from feishu", string(data))
	require.Equal(t, 3, model.Count(), "the DM, the mention and its tool result; the chatter never reached the model")

	_, msgs := sessionLines(t, home, "feishu:"+feishuGroup+":"+mention)
	require.Equal(t, "please save a note", msgs[0].Content, "the mention was stripped; the topic has its own session")
	_, msgs = sessionLines(t, home, "feishu:"+feishuAlice.OpenID)
	require.Equal(t, "hi from feishu", msgs[0].Content)
}

// TestFeishuGatewayPairsAStranger: a DM from someone not in allowFrom is
// answered with a pairing code and never reaches the model.
func TestFeishuGatewayPairsAStranger(t *testing.T) {
	model := answering(map[string]string{"hi from alice": "Hello, Alice."})
	defer model.Close()
	peer, _, _, logs := startFeishu(t, model, nil)

	peer.Say(feishupeer.Incoming{Sender: feishuBob, Text: "let me in"})
	require.Contains(t, feishuAnswered(t, peer, feishuBob.OpenID, 1, logs), "Your pairing code is ")
	peer.Say(feishupeer.Incoming{Sender: feishuAlice, Text: "hi from alice"})
	require.Equal(t, "Hello, Alice.", feishuAnswered(t, peer, feishuAlice.OpenID, 1, logs))
	require.Equal(t, 1, model.Count(), "only Alice's DM reached the model")
	require.Len(t, peer.Messages(feishuBob.OpenID), 1, "one pairing code")
}

// TestFeishuGatewayResumesAfterADrop: the long connection drops; the
// channel reconnects; Feishu redelivers the last event and pushes a new
// one: the new one is answered, the redelivered one acked and not answered again.
func TestFeishuGatewayResumesAfterADrop(t *testing.T) {
	model := answering(map[string]string{"before the drop": "Before.", "after the drop": "After."})
	defer model.Close()
	peer, _, _, logs := startFeishu(t, model, nil)

	before := peer.Say(feishupeer.Incoming{Sender: feishuAlice, Text: "before the drop"})
	require.Equal(t, "Before.", feishuAnswered(t, peer, feishuAlice.OpenID, 1, logs))
	peer.Drop()
	require.Eventually(t, func() bool { return peer.Connections() == 2 && peer.Connected() }, time.Minute, 50*time.Millisecond,
		"the channel never reconnected\n%s", logs)

	peer.Redeliver(before)
	peer.Say(feishupeer.Incoming{Sender: feishuAlice, Text: "after the drop"})
	require.Equal(t, "After.", feishuAnswered(t, peer, feishuAlice.OpenID, 2, logs))
	require.Equal(t, 2, model.Count(), "the redelivered event never reached the model again")
	require.Len(t, peer.Messages(feishuAlice.OpenID), 2, "one answer per message")
	acks := 0
	for _, a := range peer.Acks() {
		if a.MessageID == "frame-"+before {
			acks++
		}
	}
	require.Equal(t, 2, acks, "the redelivery is acked too, or Feishu keeps sending it")
}

// TestFeishuGatewayStreamsIntoOneCard: with streaming on (nanobot's
// default, set here), a slow answer is drawn by updating one card in
// place, each update the text so far, ending with the whole answer.
func TestFeishuGatewayStreamsIntoOneCard(t *testing.T) {
	const answer = "One, two, three, four, five."
	model := modeltest.New(modeltest.Text(answer).ChunkDelay(1500 * time.Millisecond))
	defer model.Close()
	peer, _, _, logs := startFeishu(t, model, map[string]any{"streaming": true})

	peer.Say(feishupeer.Incoming{Sender: feishuAlice, Text: "count slowly"})
	require.Eventually(t, func() bool {
		msgs := peer.Messages(feishuAlice.OpenID)
		return len(msgs) == 1 && msgs[0].Text() == answer
	}, time.Minute, 50*time.Millisecond, "no streamed answer: %+v\n%s", peer.Messages(feishuAlice.OpenID), logs)
	card := peer.Messages(feishuAlice.OpenID)[0]
	require.Equal(t, "interactive", card.MsgType)
	drawn := card.Drawn()
	require.GreaterOrEqual(t, len(drawn), 2, "posted, then updated in place: %q", drawn)
	require.NotEqual(t, answer, drawn[0], "the card was posted with the start of the answer")
	for _, d := range drawn {
		require.True(t, strings.HasPrefix(answer, d), "each step shows the text so far: %q", drawn)
	}
	require.Equal(t, len(drawn)-1, peer.CallsTo("PATCH", "/open-apis/im/v1/messages/"+card.ID), "every step after the first is a PATCH of that card")
	require.Equal(t, 1, model.Count())
}
