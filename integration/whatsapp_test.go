package integration

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels/discord/discordpeer"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// TestWhatsAppNotPairedGatewayRunsOn: WhatsApp's servers cannot be
// reached from a test (its channel is tested at the whatsmeow seam), so
// this drives the real gateway with WhatsApp enabled and no device paired:
// the gateway starts, says to run `nanobot channels login whatsapp`, keeps
// the channel down (not connected in `channels status`, no crash loop) and
// Discord next to it answers as usual.
func TestWhatsAppNotPairedGatewayRunsOn(t *testing.T) {
	dev := testenv.StartDevServer(t)
	peer := discordpeer.New(t)
	peer.DM(discordDM)
	model := modeltest.New().Handle(func(*modeltest.RecordedRequest) modeltest.Step { return modeltest.Text("Still here.") })
	defer model.Close()
	home := testenv.NewHome(t, model.URL(), map[string]any{"channels": map[string]any{
		"discord": map[string]any{"enabled": true, "token": discordpeer.Token, "apiBase": peer.URL(),
			"allowFrom": []string{discordAlice.ID}, "workingEmoji": ""},
		"whatsapp": map[string]any{"enabled": true, "allowFrom": []string{"+1 555 123 4567"}, "bridgeUrl": "ws://localhost:3001"},
	}})
	env := home.Env(dev.Addr)
	logs := startChannelGateway(t, env, "whatsapp")
	require.Contains(t, logs.String(), "  whatsapp: not paired")
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "run `nanobot channels login whatsapp`") },
		30*time.Second, 50*time.Millisecond, "no login hint\n%s", logs)
	require.Contains(t, logs.String(), "bridgeUrl", "the old bridge's key is named as ignored")

	require.Eventually(t, peer.Connected, time.Minute, 50*time.Millisecond, "discord never identified\n%s", logs)
	peer.Say(discordpeer.Incoming{ChannelID: discordDM, Author: discordAlice, Content: "are you there?"})
	require.Eventually(t, func() bool {
		msgs := peer.Messages(discordDM)
		return len(msgs) == 1 && msgs[0].Content == "Still here."
	}, time.Minute, 50*time.Millisecond, "discord stopped answering\n%s", logs)

	requireChannelsUp(t, env, "discord")
	wa := channelStates(t, env)["whatsapp"]
	require.True(t, wa.Enabled)
	require.Equal(t, "no", wa.Connected)
	require.Empty(t, wa.Missing)
	require.Equal(t, 1, strings.Count(logs.String(), "whatsapp channel not started"),
		"said once, not in a retry loop\n%s", logs)
}
