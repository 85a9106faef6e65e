//go:build goolm

package integration

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels/matrix/dendritepeer"
	"github.com/nanobot-durable/nanobot/channels/matrix/dendritepeer/e2eeclient"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// TestMatrixEncryptedDMEndToEnd: the gateway binary in an encrypted DM,
// as Element opens one by default. alice's client encrypts; the bot reads
// her messages, its answer and a streamed answer's edits go out encrypted,
// and nothing of the bot's is in the room in the clear.
func TestMatrixEncryptedDMEndToEnd(t *testing.T) {
	hs := dendritepeer.StartDendrite(t)
	bot, alice := hs.RegisterUser(t, "nanobot"), hs.RegisterUser(t, "alice")
	dev := testenv.StartDevServer(t)
	model := modeltest.New().Handle(matrixModel)
	defer model.Close()
	home := testenv.NewHome(t, model.URL(), map[string]any{"channels": map[string]any{"matrix": map[string]any{
		"enabled": true, "homeserver": hs.URL, "userId": bot.ID, "accessToken": bot.Token, "deviceId": bot.DeviceID,
		"allowFrom": []string{alice.ID}, "streaming": true, // e2eeEnabled: nanobot's default, true
	}}})
	_, out, errOut := startNanobot(t, home.Env(dev.Addr), "gateway")
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "  matrix: "+bot.ID+" on "+hs.URL) }, 90*time.Second, 50*time.Millisecond,
		"the banner names the Matrix account\n%s\n%s", out, errOut)

	client := e2eeclient.New(t, hs, alice)
	room := client.CreateEncryptedDM(bot)
	require.Eventually(t, func() bool { return alice.Joined(t, string(room), bot) }, 60*time.Second, 50*time.Millisecond,
		"the bot joins alice's encrypted DM\n%s", errOut)
	client.SendText(room, "what is 2+2?")
	require.Eventually(t, func() bool { text, _ := client.Shown(room, bot); return text == "**Four**, of course." }, 60*time.Second, 50*time.Millisecond,
		"no encrypted answer\n%s", errOut)

	client.SendText(room, "count slowly")
	var edits int
	require.Eventually(t, func() bool {
		var text string
		text, edits = client.Shown(room, bot)
		return text == "One, two, three, four."
	}, 60*time.Second, 50*time.Millisecond, "no streamed encrypted answer\n%s", errOut)
	require.Positive(t, edits, "the answer was streamed into one event and edited in place")
	require.Empty(t, dendritepeer.From(alice.Messages(t, string(room)), bot), "nothing from the bot in the clear")
	require.Equal(t, 2, model.Count())
}
