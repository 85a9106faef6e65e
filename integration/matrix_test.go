package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels/matrix/dendritepeer"
	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// TestMatrixGatewayEndToEnd drives the real gateway binary through a real
// dendrite, with the real Temporal and a scripted model at the wire: a
// user registered over the client-server API invites the bot to a DM and
// gets a formatted reply to their event; in a room of three, a message
// without a mention is not answered and one with a mention is, after a
// tool round trip (list_dir); a slow answer streams into one event that
// is edited in place (m.replace) and the final answer replaces.
func TestMatrixGatewayEndToEnd(t *testing.T) {
	hs := dendritepeer.StartDendrite(t)
	bot, alice, carol := hs.RegisterUser(t, "nanobot"), hs.RegisterUser(t, "alice"), hs.RegisterUser(t, "carol")
	bot.SetDisplayName(t, "Nanobot")
	dev := testenv.StartDevServer(t)
	model := modeltest.New().Handle(matrixModel)
	defer model.Close()
	home := testenv.NewHome(t, model.URL(), map[string]any{"channels": map[string]any{"matrix": map[string]any{
		"enabled": true, "homeserver": hs.URL, "userId": bot.ID, "accessToken": bot.Token, "deviceId": bot.DeviceID,
		"allowFrom": []string{alice.ID}, "groupPolicy": "mention", "streaming": true,
	}}})
	require.NoError(t, os.WriteFile(filepath.Join(home.Workspace, "notes.txt"), []byte("notes"), 0o644))
	_, out, errOut := startNanobot(t, home.Env(dev.Addr), "gateway")
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "  matrix: "+bot.ID+" on "+hs.URL) }, 90*time.Second, 50*time.Millisecond,
		"the banner names the Matrix account\n%s\n%s", out, errOut)

	// A DM: the invite from alice is joined, the answer replies to her event.
	dm := alice.CreateRoom(t, true, bot)
	require.Eventually(t, func() bool { return alice.Joined(t, dm, bot) }, 60*time.Second, 50*time.Millisecond, "the bot joins alice's DM")
	asked := alice.SendText(t, dm, "what is 2+2?")
	var reply dendritepeer.Event
	require.Eventually(t, func() bool {
		all := alice.Messages(t, dm)
		mine := dendritepeer.From(all, bot)
		if len(mine) != 1 {
			return false
		}
		reply = mine[0]
		return dendritepeer.ShownBody(all, reply) == "**Four**, of course."
	}, 60*time.Second, 50*time.Millisecond, "no answer in the DM")
	require.Equal(t, asked, reply.ReplyTo())
	require.Equal(t, "<p><strong>Four</strong>, of course.</p>", dendritepeer.Shown(alice.Messages(t, dm), reply)["formatted_body"])

	// A room of three under groupPolicy "mention".
	room := alice.CreateRoom(t, false, bot, carol)
	carol.Join(t, room)
	require.Eventually(t, func() bool { return alice.Joined(t, room, bot) }, 60*time.Second, 50*time.Millisecond, "the bot joins the room")
	alice.SendText(t, room, "just chatting, no bots here")
	mention := alice.SendMention(t, room, bot, "Nanobot", "list the workspace")
	require.Eventually(t, func() bool {
		all := alice.Messages(t, room)
		mine := dendritepeer.From(all, bot)
		return len(mine) >= 1 && dendritepeer.ShownBody(all, mine[len(mine)-1]) == "I see `notes.txt`."
	}, 60*time.Second, 50*time.Millisecond, "no answer to the mention")
	all := alice.Messages(t, room)
	mine := dendritepeer.From(all, bot)
	require.Len(t, mine, 2, "the tool's hint and one answer: the chatter was not answered")
	require.Equal(t, "↳ list_dir .", dendritepeer.ShownBody(all, mine[0]), "sendToolHints shows the tool as it runs")
	require.Equal(t, mention, mine[1].ReplyTo())

	// A slow answer streams into one event edited in place.
	alice.SendText(t, dm, "count slowly")
	var streamed dendritepeer.Event
	require.Eventually(t, func() bool {
		all = alice.Messages(t, dm)
		mine := dendritepeer.From(all, bot)
		if len(mine) != 2 {
			return false
		}
		streamed = mine[1]
		return dendritepeer.ShownBody(all, streamed) == "One, two, three, four."
	}, 60*time.Second, 50*time.Millisecond, "no streamed answer")
	require.NotEqual(t, "One, two, three, four.", streamed.Body(), "the stream posted the start of the answer…")
	require.True(t, strings.HasPrefix("One, two, three, four.", streamed.Body()), "posted %q", streamed.Body())
	require.NotEmpty(t, dendritepeer.Edits(all, streamed.ID), "…and edited it (m.replace)")

	require.Equal(t, 4, model.Count(), "DM, mention and its tool round trip, stream: the chatter never reached the model")
	var msgs []chat.Message
	require.Eventually(t, func() bool { _, msgs = sessionLines(t, home, "matrix:"+dm); return len(msgs) == 4 }, 30*time.Second, 50*time.Millisecond,
		"the DM's session holds both turns")
	require.Equal(t, []string{"user: what is 2+2?", "assistant: **Four**, of course.", "user: count slowly", "assistant: One, two, three, four."}, slackRoles(msgs))
	_, msgs = sessionLines(t, home, "matrix:"+room)
	require.Len(t, msgs, 4, "the mention, the tool call, its result, the answer")
	require.Equal(t, "list_dir", msgs[1].ToolCalls[0].Function.Name)
	require.Equal(t, chat.RoleTool, msgs[2].Role)
	require.Equal(t, []string{"user: list the workspace", "assistant: I see `notes.txt`."}, slackRoles([]chat.Message{msgs[0], msgs[3]}))
}

// matrixModel is the model of the Matrix gateway tests: a formatted
// answer, a tool round trip, and a slow answer to stream.
func matrixModel(req *modeltest.RecordedRequest) modeltest.Step {
	last := req.Messages[len(req.Messages)-1]
	switch {
	case last.Role == chat.RoleTool:
		return modeltest.Text("I see `notes.txt`.")
	case strings.Contains(last.Content, "what is 2+2"):
		return modeltest.Text("**Four**, of course.")
	case strings.Contains(last.Content, "list the workspace"):
		return modeltest.ToolCalls(modeltest.Call{ID: "call_ls", Name: "list_dir", Args: `{"path":"."}`})
	case strings.Contains(last.Content, "count slowly"):
		return modeltest.Text("One, two, three, four.").ChunkDelay(600 * time.Millisecond)
	}
	return modeltest.Text("unexpected: " + last.Content)
}
