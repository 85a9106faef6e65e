package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels/signal/signalpeer"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

var (
	signalAlice = signalpeer.Alice
	signalBob   = signalpeer.Bob
	signalGroup = signalpeer.GroupID
)

// signalBlock is channels.signal against the peer: Alice allowed in DMs,
// the peer's group on with mentions required (nanobot's default).
func signalBlock(peer *signalpeer.Peer) map[string]any {
	return map[string]any{"signal": map[string]any{
		"enabled": true, "phoneNumber": signalpeer.Account, "daemonHost": peer.Host(), "daemonPort": peer.Port(),
		"attachmentsDir": peer.AttachmentsDir(),
		"dm":             map[string]any{"enabled": true, "policy": "allowlist", "allowFrom": []string{signalAlice.Number}},
		"group":          map[string]any{"enabled": true, "policy": "allowlist", "allowFrom": []string{signalGroup}},
	}}
}

// startSignal runs the gateway against a fresh peer and waits for its event stream.
func startSignal(t *testing.T, model *modeltest.Server) (*signalpeer.Peer, *testenv.Home, []string, outputs) {
	t.Helper()
	dev := testenv.StartDevServer(t)
	peer := signalpeer.New(t)
	home := testenv.NewHome(t, model.URL(), map[string]any{"channels": signalBlock(peer)})
	env := home.Env(dev.Addr)
	logs := startChannelGateway(t, env, "signal")
	require.Eventually(t, peer.Connected, time.Minute, 50*time.Millisecond, "the gateway never opened the event stream\n%s", logs)
	return peer, home, env, logs
}

// signalSaid waits until the bot sent want to chat.
func signalSaid(t *testing.T, peer *signalpeer.Peer, chat, want string, logs outputs) {
	t.Helper()
	require.Eventually(t, func() bool { return peer.Contains(chat, want) }, time.Minute, 50*time.Millisecond,
		"the bot never sent %q to %s: %q\n%s", want, chat, peer.Messages(chat), logs)
}

// TestSignalGatewayConversation drives the real gateway binary through
// signalpeer: a DM is answered with Signal's text styles and typing; a
// group message without a mention is left alone and a mention gets a tool
// round trip in the group's session; a file sent in reaches the model.
func TestSignalGatewayConversation(t *testing.T) {
	model := noteTaker("from signal", map[string]string{"hi from signal": "Hello, **Signal**.", "[image: ": "A cat."})
	defer model.Close()
	peer, home, env, logs := startSignal(t, model)
	require.Contains(t, logs.String(), "  signal: "+signalpeer.Account)

	peer.DM(signalAlice, "hi from signal")
	signalSaid(t, peer, signalAlice.Number, "Hello, Signal.", logs)
	sent := peer.Sent(signalAlice.Number)
	require.Len(t, sent, 1)
	require.Equal(t, []string{"7:6:BOLD"}, sent[0].TextStyle)
	require.NotEmpty(t, peer.Typing(), "typing while the turn ran")
	requireChannelsUp(t, env, "signal")

	peer.Group(signalAlice, "just chatting", false)
	peer.Group(signalAlice, "please save a note", true)
	signalSaid(t, peer, signalGroup, "Saved it to note.txt.", logs)
	data, err := os.ReadFile(filepath.Join(home.Workspace, "note.txt"))
	require.NoError(t, err)
	require.Equal(t, "from signal", string(data))
	require.Equal(t, 3, model.Count(), "the DM, the mention and its tool result; the chatter never reached the model on its own")
	_, lines := sessionLines(t, home, "signal:"+signalGroup)
	require.Equal(t, "[Recent group messages for context:]\nAlice: just chatting\n---\n[Alice]: please save a note", lines[0].Content)

	peer.File(signalAlice, "what is this?", "cat.png", "image/png", []byte("\x89PNG cat"))
	signalSaid(t, peer, signalAlice.Number, "A cat.", logs)
	_, lines = sessionLines(t, home, "signal:"+signalAlice.Number)
	require.Equal(t, "hi from signal", lines[0].Content)
	var seen string
	for _, l := range lines {
		if strings.Contains(l.Content, "what is this?") {
			seen = l.Content
		}
	}
	require.Contains(t, seen, "[image: "+filepath.Join(home.Workspace, "media"))
}

// TestSignalGatewayPairsAStranger: a DM from someone not in dm.allowFrom
// is answered with a pairing code and never reaches the model.
func TestSignalGatewayPairsAStranger(t *testing.T) {
	model := answering(map[string]string{"hi from alice": "Hello, Alice."})
	defer model.Close()
	peer, _, _, logs := startSignal(t, model)

	peer.DM(signalBob, "let me in")
	signalSaid(t, peer, signalBob.Number, "Your pairing code is ", logs)
	peer.DM(signalAlice, "hi from alice")
	signalSaid(t, peer, signalAlice.Number, "Hello, Alice.", logs)
	require.Equal(t, 1, model.Count(), "only Alice's message reached the model")
	require.Len(t, peer.Messages(signalBob.Number), 1, "the stranger got the pairing code only")
}

// TestSignalGatewayResumesAfterADrop: the daemon drops the event stream;
// what came in meanwhile arrives when the channel reconnects after its last
// event; a daemon that no longer knows that id sends everything it kept
// again, and nothing is answered twice.
func TestSignalGatewayResumesAfterADrop(t *testing.T) {
	model := answering(map[string]string{"before the drop": "Before.", "during the drop": "During.", "after the drop": "After."})
	defer model.Close()
	peer, _, _, logs := startSignal(t, model)

	peer.DM(signalAlice, "before the drop")
	signalSaid(t, peer, signalAlice.Number, "Before.", logs)
	peer.Drop()
	peer.DM(signalAlice, "during the drop")
	signalSaid(t, peer, signalAlice.Number, "During.", logs)
	n, lastIDs := peer.Connections()
	require.Equal(t, 2, n)
	require.NotEmpty(t, lastIDs[1], "reconnected after its last event")

	peer.ForgetIDs()
	peer.Drop()
	require.Eventually(t, func() bool { n, _ := peer.Connections(); return n == 3 && peer.Connected() }, time.Minute, 50*time.Millisecond)
	peer.DM(signalAlice, "after the drop")
	signalSaid(t, peer, signalAlice.Number, "After.", logs)
	require.Equal(t, []string{"Before.", "During.", "After."}, peer.Messages(signalAlice.Number), "each answered once")
	var asked []string
	for _, r := range model.Requests() {
		said, _, _ := strings.Cut(r.Messages[len(r.Messages)-1].Content, "\n\n")
		asked = append(asked, said)
	}
	require.Equal(t, []string{"before the drop", "during the drop", "after the drop"}, asked, "each message reached the model once\n%s", logs)
}

// TestSignalApprovalFromTheChat: Signal has no buttons; the request names
// the commands, and "/approve <id>" typed in the chat runs the call once.
func TestSignalApprovalFromTheChat(t *testing.T) {
	peer := signalpeer.New(t)
	_, model, home, env := approvalSetup(t, map[string]any{"channels": signalBlock(peer)})
	logs := startChannelGateway(t, env, "signal")
	require.Eventually(t, peer.Connected, time.Minute, 50*time.Millisecond, "no event stream\n%s", logs)
	scriptRiskyClean(model, "Cleaned the build.")

	peer.DM(signalAlice, "clean the build")
	var id string
	require.Eventually(t, func() bool {
		for _, m := range peer.Messages(signalAlice.Number) {
			if s := approvalIDRe.FindStringSubmatch(m); s != nil {
				id = s[1]
				return true
			}
		}
		return false
	}, time.Minute, 50*time.Millisecond, "the request: %q\n%s", peer.Messages(signalAlice.Number), logs)
	require.True(t, peer.Contains(signalAlice.Number, "/approve "+id), "the request names the command to answer it")
	requireNotRun(t, home, model)

	peer.DM(signalAlice, "/approve "+id)
	signalSaid(t, peer, signalAlice.Number, "Cleaned the build.", logs)
	requireRanOnce(t, home, model)
}
