package integration

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels/wecom/wecompeer"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// Ids of the WeCom conversation.
const (
	wecomAlice = "alice"
	wecomBob   = "bob"
	wecomTeam  = "wrkTeamChat01"
)

// startWeCom runs the gateway against a fresh peer, Alice allowed, and
// waits for the subscription.
func startWeCom(t *testing.T, model *modeltest.Server) (*wecompeer.Peer, *testenv.Home, []string, outputs) {
	t.Helper()
	dev := testenv.StartDevServer(t)
	peer := wecompeer.New(t)
	home := testenv.NewHome(t, model.URL(), map[string]any{"channels": map[string]any{"wecom": map[string]any{
		"enabled": true, "botId": wecompeer.BotID, "secret": wecompeer.Secret, "wsUrl": peer.URL(),
		"allowFrom": []string{wecomAlice}}}})
	env := home.Env(dev.Addr)
	logs := startChannelGateway(t, env, "wecom")
	require.Eventually(t, peer.Subscribed, time.Minute, 50*time.Millisecond, "the gateway never subscribed\n%s", logs)
	return peer, home, env, logs
}

// wecomAnswer waits for the stream on a callback's req_id to finish and returns its text.
func wecomAnswer(t *testing.T, peer *wecompeer.Peer, reqID string, logs outputs) string {
	t.Helper()
	require.Eventually(t, func() bool {
		r := peer.Replies(reqID)
		return len(r) > 0 && r[len(r)-1].Finish
	}, time.Minute, 50*time.Millisecond, "no answer on %s: %+v\n%s", reqID, peer.Sent(), logs)
	r := peer.Replies(reqID)
	requireOneStream(t, r)
	return r[len(r)-1].Content
}

// TestWeComGatewayConversation drives the real gateway binary through
// wecompeer: a DM is drawn into one stream on its callback's req_id and
// finished by the answer; a group message that does not @-mention the bot never reaches
// it (WeCom does not push it); a mention gets a tool round trip and its
// answer in the group, in the group's own session.
func TestWeComGatewayConversation(t *testing.T) {
	model := noteTaker("from wecom", map[string]string{"hi from wecom": "Hello, **WeCom** ~~world~~."})
	defer model.Close()
	peer, home, env, logs := startWeCom(t, model)
	require.Contains(t, logs.String(), "  wecom: AI bot "+wecompeer.BotID)
	require.NotContains(t, logs.String(), wecompeer.Secret, "the secret is never printed")

	hi, _ := peer.Say(wecompeer.Message{From: wecomAlice, Text: "hi from wecom"})
	require.Eventually(t, func() bool {
		r := peer.Replies(hi)
		return len(r) > 0 && r[len(r)-1].Finish && r[len(r)-1].Content == "Hello, **WeCom** world."
	}, time.Minute, 50*time.Millisecond, "no answer to the DM: %+v\n%s", peer.Sent(), logs)
	requireOneStream(t, peer.Replies(hi))
	requireChannelsUp(t, env, "wecom")

	chatter, _ := peer.Say(wecompeer.Message{From: wecomAlice, ChatID: wecomTeam, Text: "just chatting"})
	require.Empty(t, chatter, "WeCom does not push a group message without a mention")
	note, _ := peer.Say(wecompeer.Message{From: wecomAlice, ChatID: wecomTeam, Text: wecompeer.Mention + " please save a note"})
	require.Eventually(t, func() bool {
		r := peer.Replies(note)
		return len(r) > 0 && r[len(r)-1].Finish && r[len(r)-1].Content == "Saved it to note.txt."
	}, time.Minute, 50*time.Millisecond, "no answer to the mention: %+v", peer.Sent())
	requireOneStream(t, peer.Replies(note))
	require.Equal(t, "↳ write_file note.txt", peer.Replies(note)[0].Content, "the tool hint (sendToolHints) is drawn while the tool runs")
	data, err := os.ReadFile(filepath.Join(home.Workspace, "note.txt"))
	require.NoError(t, err)
	require.Equal(t, "from wecom", string(data))
	require.Equal(t, 3, model.Count(), "the DM, the mention and its tool result")

	_, msgs := sessionLines(t, home, "wecom:"+wecomTeam)
	require.Equal(t, wecompeer.Mention+" please save a note", msgs[0].Content)
	_, msgs = sessionLines(t, home, "wecom:"+wecomAlice)
	require.Equal(t, "hi from wecom", msgs[0].Content)
}

// requireOneStream: a turn is drawn into one stream, finished once by its answer.
func requireOneStream(t *testing.T, replies []wecompeer.Stream) {
	t.Helper()
	for i, r := range replies {
		require.Equal(t, replies[0].ID, r.ID, "one stream: %+v", replies)
		require.Equal(t, i == len(replies)-1, r.Finish, "finished by the answer only: %+v", replies)
	}
}

// TestWeComGatewayPairsAStranger: a DM from someone not in allowFrom is
// answered with a pairing code and never reaches the model.
func TestWeComGatewayPairsAStranger(t *testing.T) {
	model := answering(map[string]string{"hi from alice": "Hello, Alice."})
	defer model.Close()
	peer, _, _, logs := startWeCom(t, model)

	knock, _ := peer.Say(wecompeer.Message{From: wecomBob, Text: "let me in"})
	require.Contains(t, wecomAnswer(t, peer, knock, logs), "Your pairing code is ")
	hi, _ := peer.Say(wecompeer.Message{From: wecomAlice, Text: "hi from alice"})
	require.Equal(t, "Hello, Alice.", wecomAnswer(t, peer, hi, logs))
	require.Equal(t, 1, model.Count(), "only Alice's DM reached the model")
}

// TestWeComGatewayResumesAfterADrop: the long connection drops; the
// channel connects and subscribes anew; WeCom redelivers the last message
// (the same msgid, a new req_id) and pushes a new one: the new one is
// answered, the redelivered one not again.
func TestWeComGatewayResumesAfterADrop(t *testing.T) {
	model := answering(map[string]string{"before the drop": "Before.", "after the drop": "After."})
	defer model.Close()
	peer, _, _, logs := startWeCom(t, model)

	said := wecompeer.Message{From: wecomAlice, Text: "before the drop"}
	first, before := peer.Say(said)
	require.Equal(t, "Before.", wecomAnswer(t, peer, first, logs))
	peer.Drop()
	require.Eventually(t, func() bool { c, s, _ := peer.Stats(); return c == 2 && s == 2 && peer.Subscribed() }, time.Minute, 50*time.Millisecond,
		"the channel never subscribed again\n%s", logs)

	again := peer.Redeliver(said, before)
	after, _ := peer.Say(wecompeer.Message{From: wecomAlice, Text: "after the drop"})
	require.Equal(t, "After.", wecomAnswer(t, peer, after, logs))
	require.Equal(t, 2, model.Count(), "the redelivered message never reached the model again")
	require.Empty(t, peer.Replies(again), "the redelivery is not answered")
	require.Empty(t, peer.Proactive(wecomAlice), "nor sent to Alice another way")
}
