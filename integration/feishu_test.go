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

var feishuAlice = feishupeer.User{OpenID: "ou_itest_alice_01", UserID: "u_alice", Name: "Alice"}

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

// TestFeishuGatewayConversation drives the real gateway binary through
// feishupeer's long connection: a DM is answered with a card and the
// reaction goes on and off; a group message without a mention is left
// alone; a mention gets a tool round trip and its answer in the group, in
// the topic's own session.
func TestFeishuGatewayConversation(t *testing.T) {
	dev := testenv.StartDevServer(t)
	peer := feishupeer.New(t)
	model := modeltest.New().Handle(func(req *modeltest.RecordedRequest) modeltest.Step {
		last := req.Messages[len(req.Messages)-1]
		switch {
		case last.Role == "tool":
			return modeltest.Text("Saved it to note.txt.")
		case strings.Contains(last.Content, "save a note"):
			return modeltest.ToolCalls(modeltest.Call{ID: "call_1", Name: "write_file", Args: `{"path":"note.txt","content":"from feishu"}`})
		case strings.Contains(last.Content, "hi from feishu"):
			return modeltest.Text("Hello, **Feishu**.")
		}
		return modeltest.Text("Hello again.")
	})
	defer model.Close()
	home := feishuHome(t, peer, model.URL(), nil)
	env := home.Env(dev.Addr)
	logs := startChannelGateway(t, env, "feishu")
	require.Eventually(t, peer.Connected, time.Minute, 50*time.Millisecond, "the gateway never opened the long connection\n%s", logs)
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
