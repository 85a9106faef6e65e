package integration

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels/teams/teamspeer"
	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// The Teams conversation of the tests.
const (
	teamsDM      = "a:1-alice-personal"
	teamsThread  = "19:general@thread.tacv2;messageid=1700000000001"
	teamsBobDM   = "a:1-bob-personal"
	teamsSession = "msteams:19:general@thread.tacv2:thread:1700000000001"
)

var (
	teamsAlice = teamspeer.User{ID: "29:1-alice", AADObjectID: "aad-alice-0001", Name: "Alice"}
	teamsBob   = teamspeer.User{ID: "29:1-bob", AADObjectID: "aad-bob-0002", Name: "Bob"}
)

// teamsBlock is channels.msteams against the peer, its endpoint on a free port.
func teamsBlock(t *testing.T, peer *teamspeer.Peer) map[string]any {
	port := testenv.FreePort(t)
	peer.SetEndpoint(fmt.Sprintf("http://127.0.0.1:%d/api/messages", port))
	return map[string]any{"enabled": true, "appId": teamspeer.AppID, "appPassword": teamspeer.AppPassword, "port": port,
		"openIdMetadata": peer.OpenIDMetadata(), "tokenEndpoint": peer.TokenEndpoint(),
		"trustedServiceUrlHosts": []string{"127.0.0.1"}, "allowFrom": []string{teamsAlice.AADObjectID}}
}

// teamsSent are the texts the bot shows in a conversation now.
func teamsSent(peer *teamspeer.Peer, conversation string) []string {
	var out []string
	for _, a := range peer.Sent(conversation) {
		out = append(out, a.Text)
	}
	return out
}

// TestTeamsGatewayConversation drives the real gateway binary through
// teamspeer: forged, expired and misaddressed tokens are refused; a DM is
// answered with a reply to it; a stranger gets a pairing code; a channel
// message without a mention is left alone and a mention gets a tool round
// trip in its thread; a slow answer streams into one message edited in place.
func TestTeamsGatewayConversation(t *testing.T) {
	dev := testenv.StartDevServer(t)
	peer := teamspeer.New(t)
	model := modeltest.New().Handle(func(req *modeltest.RecordedRequest) modeltest.Step {
		last := req.Messages[len(req.Messages)-1]
		switch {
		case last.Role == chat.RoleTool:
			return modeltest.Text("Saved it to note.txt.")
		case strings.Contains(last.Content, "save a note"):
			return modeltest.ToolCalls(modeltest.Call{ID: "call_1", Name: "write_file", Args: `{"path":"note.txt","content":"from teams"}`})
		case strings.Contains(last.Content, "hi from teams"):
			return modeltest.Text("Hello, **Teams**.")
		case strings.Contains(last.Content, "count slowly"):
			return modeltest.Text("One, two, three, four.").ChunkDelay(600 * time.Millisecond)
		}
		return modeltest.Text("unexpected: " + last.Content)
	})
	defer model.Close()
	home := testenv.NewHome(t, model.URL(), map[string]any{"channels": map[string]any{"msteams": teamsBlock(t, peer)}})
	logs := startChannelGateway(t, home.Env(dev.Addr), "msteams")

	for _, s := range []teamspeer.Signing{teamspeer.Forged, teamspeer.Expired, teamspeer.WrongAudience} {
		status, _ := peer.Post(peer.Message(teamspeer.Personal, teamsDM, teamsAlice, "hi from teams (forged)", false), s)
		require.Equal(t, http.StatusUnauthorized, status, "signing %d is refused\n%s", s, logs)
	}

	hi := peer.Message(teamspeer.Personal, teamsDM, teamsAlice, "hi from teams", false)
	status, _ := peer.Post(hi, teamspeer.Valid)
	require.Equal(t, http.StatusOK, status, "%s", logs)
	require.Eventually(t, func() bool {
		return strings.Join(teamsSent(peer, teamsDM), "|") == "Hello, **Teams**."
	}, time.Minute, 50*time.Millisecond, "no answer to the DM: %q\n%s", teamsSent(peer, teamsDM), logs)
	require.Equal(t, hi["id"], peer.Sent(teamsDM)[0].ReplyToID, "the answer replies to the user's message")
	require.Positive(t, peer.Typing(teamsDM), "typing was shown")

	status, _ = peer.Post(peer.Message(teamspeer.Personal, teamsBobDM, teamsBob, "let me in", false), teamspeer.Valid)
	require.Equal(t, http.StatusOK, status)
	require.Eventually(t, func() bool {
		sent := teamsSent(peer, teamsBobDM)
		return len(sent) == 1 && strings.Contains(sent[0], "Your pairing code is ")
	}, time.Minute, 50*time.Millisecond, "no pairing code: %q\n%s", teamsSent(peer, teamsBobDM), logs)

	peer.Post(peer.Message(teamspeer.Channel, teamsThread, teamsAlice, "just chatting", false), teamspeer.Valid)
	status, _ = peer.Post(peer.Message(teamspeer.Channel, teamsThread, teamsAlice, "please save a note", true), teamspeer.Valid)
	require.Equal(t, http.StatusOK, status)
	require.Eventually(t, func() bool {
		sent := teamsSent(peer, teamsThread)
		return len(sent) == 2 && sent[1] == "Saved it to note.txt."
	}, time.Minute, 50*time.Millisecond, "no answer to the mention: %q\n%s", teamsSent(peer, teamsThread), logs)
	require.Equal(t, "↳ write_file note.txt", teamsSent(peer, teamsThread)[0], "the tool hint streams first")
	data, err := os.ReadFile(filepath.Join(home.Workspace, "note.txt"))
	require.NoError(t, err)
	require.Equal(t, "from teams", string(data))

	peer.Post(peer.Message(teamspeer.Personal, teamsDM, teamsAlice, "count slowly", false), teamspeer.Valid)
	var streamed teamspeer.Activity
	require.Eventually(t, func() bool {
		sent := peer.Sent(teamsDM)
		if len(sent) != 2 {
			return false
		}
		streamed = sent[1]
		return streamed.Text == "One, two, three, four."
	}, time.Minute, 50*time.Millisecond, "no streamed answer: %q\n%s", teamsSent(peer, teamsDM), logs)
	require.NotEqual(t, streamed.Text, streamed.Posted, "the stream posted the start of the answer…")
	require.True(t, strings.HasPrefix(streamed.Text, streamed.Posted), "posted %q", streamed.Posted)
	require.Positive(t, streamed.Edits, "…and edited it")

	require.Equal(t, 4, model.Count(), "DM, mention and its tool result, stream: the forged, the stranger and the chatter never reached the model")
	require.Equal(t, 1, peer.TokensIssued(), "one AAD token served every reply")
	_, msgs := sessionLines(t, home, teamsSession)
	require.Equal(t, "please save a note", msgs[0].Content, "the mention was stripped; the thread has its session")
	_, msgs = sessionLines(t, home, "msteams:"+teamsDM)
	require.Equal(t, "hi from teams", msgs[0].Content)
}

// TestTeamsApprovalCard: the request comes with an Adaptive Card; Alice's
// press on Approve (an Action.Submit) runs the call once, the answer comes
// in the chat and the card loses its buttons.
func TestTeamsApprovalCard(t *testing.T) {
	peer := teamspeer.New(t)
	_, model, home, env := approvalSetup(t, map[string]any{"channels": map[string]any{"msteams": teamsBlock(t, peer)}})
	logs := startChannelGateway(t, env, "msteams")
	scriptRiskyClean(model, "Cleaned the build.")
	status, _ := peer.Post(peer.Message(teamspeer.Personal, teamsDM, teamsAlice, "clean the build", false), teamspeer.Valid)
	require.Equal(t, http.StatusOK, status, "%s", logs)

	var card teamspeer.Activity
	require.Eventually(t, func() bool {
		for _, a := range peer.Sent(teamsDM) {
			if strings.Contains(a.Attachments, `"Action.Submit"`) {
				card = a
				return true
			}
		}
		return false
	}, time.Minute, 50*time.Millisecond, "the request with its card: %q\n%s", teamsSent(peer, teamsDM), logs)
	m := approvalIDRe.FindStringSubmatch(card.Text)
	require.NotNil(t, m, card.Text)
	requireNotRun(t, home, model)

	status, _ = peer.Post(peer.Submit(teamspeer.Personal, teamsDM, teamsAlice, card, map[string]any{"nanobot": "/approve " + m[1]}), teamspeer.Valid)
	require.Equal(t, http.StatusOK, status)
	require.Eventually(t, func() bool {
		sent := teamsSent(peer, teamsDM)
		return len(sent) > 0 && sent[len(sent)-1] == "Cleaned the build."
	}, time.Minute, 50*time.Millisecond, "the answer: %q\n%s", teamsSent(peer, teamsDM), logs)
	for _, a := range peer.Sent(teamsDM) {
		if a.ID == card.ID {
			require.Empty(t, a.Attachments, "the buttons are gone")
			require.Contains(t, a.Text, "Answered by Alice")
		}
	}
	requireRanOnce(t, home, model)
}
