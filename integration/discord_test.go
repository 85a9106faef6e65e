package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels/discord/discordpeer"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// Ids of the Discord conversation.
const (
	discordGuild   = "910000000000000001"
	discordGeneral = "910000000000000010"
	discordDM      = "910000000000000030"
)

var discordAlice = discordpeer.User{ID: "810000000000000001", Username: "alice"}

// discordHome is a home with Discord enabled against the peer.
func discordHome(t *testing.T, peer *discordpeer.Peer, modelURL string, block map[string]any) *testenv.Home {
	t.Helper()
	b := map[string]any{"enabled": true, "token": discordpeer.Token, "apiBase": peer.URL(),
		"allowFrom": []string{discordAlice.ID}, "workingEmoji": ""}
	for k, v := range block {
		b[k] = v
	}
	return testenv.NewHome(t, modelURL, map[string]any{"channels": map[string]any{"discord": b}})
}

// TestDiscordGatewayConversation drives the real gateway binary through
// discordpeer: a DM is answered with a reply to it; a guild message that
// does not mention the bot is left alone; a mention gets a tool round trip
// and its answer in the channel, in the channel's own session.
func TestDiscordGatewayConversation(t *testing.T) {
	dev := testenv.StartDevServer(t)
	peer := discordpeer.New(t)
	peer.DM(discordDM)
	peer.GuildChannel(discordGuild, discordGeneral)
	model := noteTaker("from discord", map[string]string{"hi from discord": "Hello, **Discord**."})
	defer model.Close()
	home := discordHome(t, peer, model.URL(), nil)
	logs := startChannelGateway(t, home.Env(dev.Addr), "discord")
	require.Eventually(t, peer.Connected, time.Minute, 50*time.Millisecond, "the gateway never identified\n%s", logs)
	require.Contains(t, logs.String(), "  discord: @"+discordpeer.BotName)

	hi := peer.Say(discordpeer.Incoming{ChannelID: discordDM, Author: discordAlice, Content: "hi from discord"})
	require.Eventually(t, func() bool {
		msgs := peer.Messages(discordDM)
		return len(msgs) == 1 && msgs[0].Content == "Hello, **Discord**."
	}, time.Minute, 50*time.Millisecond, "no answer to the DM\n%s", logs)
	require.Equal(t, hi, peer.Messages(discordDM)[0].ReplyTo, "the answer replies to the user's message")
	require.Positive(t, peer.CallsTo("POST", "/channels/"+discordDM+"/typing"), "typing was shown")
	require.Eventually(t, func() bool {
		r := peer.Reactions(hi)
		return len(r) == 2 && r[0] == "+👀" && r[1] == "-👀"
	}, 30*time.Second, 50*time.Millisecond, "the read receipt went on, then off with the answer")

	peer.Say(discordpeer.Incoming{ChannelID: discordGeneral, GuildID: discordGuild, Author: discordAlice, Content: "just chatting"})
	peer.Say(discordpeer.Incoming{ChannelID: discordGeneral, GuildID: discordGuild, Author: discordAlice,
		Content: "<@" + discordpeer.BotID + "> please save a note", Mentions: []discordpeer.User{discordpeer.Bot}})
	require.Eventually(t, func() bool {
		msgs := peer.Messages(discordGeneral)
		return len(msgs) == 2 && msgs[1].Content == "Saved it to note.txt."
	}, time.Minute, 50*time.Millisecond, "no answer to the mention: %+v", peer.Messages(discordGeneral))
	posted := peer.Messages(discordGeneral)
	require.Equal(t, "-# ↳ write_file note.txt", posted[0].Content, "the tool hint (sendToolHints) streams first")
	require.Empty(t, posted[0].ReplyTo, "a tool's hint answers nobody")
	require.NotEmpty(t, posted[1].ReplyTo, "the turn's first text answers the mention")
	data, err := os.ReadFile(filepath.Join(home.Workspace, "note.txt"))
	require.NoError(t, err)
	require.Equal(t, "from discord", string(data))
	require.Equal(t, 3, model.Count(), "the DM, the mention and its tool result; the chatter never reached the model")

	_, msgs := sessionLines(t, home, "discord:"+discordGeneral)
	require.Equal(t, "please save a note", msgs[0].Content, "the mention was stripped")
	_, msgs = sessionLines(t, home, "discord:"+discordDM)
	require.Equal(t, "hi from discord", msgs[0].Content)
}

// TestDiscordDeliveryResumesAfterAKill: a 3-part answer; the peer holds the
// third POST unanswered and the gateway is SIGKILLed; a second gateway
// takes the delivery over when its heartbeat times out and sends part 3
// only: the chat shows parts 1, 2 and 3, each once.
func TestDiscordDeliveryResumesAfterAKill(t *testing.T) {
	dev := testenv.StartDevServer(t)
	peer := discordpeer.New(t)
	peer.DM(discordDM)
	parts := []string{
		"Part one. " + strings.Repeat("alpha ", 300),
		"Part two. " + strings.Repeat("bravo ", 300),
		"Part three. " + strings.Repeat("charlie ", 200),
	}
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	answer := strings.Join(parts, "\n\n")
	require.Greater(t, len(answer), 4000)
	model := modeltest.New().Handle(func(*modeltest.RecordedRequest) modeltest.Step { return modeltest.Text(answer) })
	defer model.Close()
	home := discordHome(t, peer, model.URL(), map[string]any{"streaming": false})
	env := home.Env(dev.Addr, "NANOBOT_LOG_LEVEL=info")

	first, out, errOut := startNanobot(t, env, "gateway")
	require.Eventually(t, peer.Connected, time.Minute, 50*time.Millisecond, "the gateway never identified\n%s\n%s", out, errOut)
	held := peer.HoldPost(3)
	peer.Say(discordpeer.Incoming{ChannelID: discordDM, Author: discordAlice, Content: "tell me a long story"})
	select {
	case <-held:
	case <-time.After(2 * time.Minute):
		t.Fatalf("the third part was never posted\n%s\n%s", out, errOut)
	}
	require.Len(t, peer.Messages(discordDM), 2, "parts 1 and 2 are out, part 3 is held")
	require.NoError(t, first.Process.Signal(syscall.SIGKILL))
	_, _ = first.Process.Wait()

	second := startChannelGateway(t, env, "discord")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	require.Eventually(t, func() bool { return len(peer.Messages(discordDM)) >= 3 }, 2*time.Minute, 100*time.Millisecond,
		"part 3 was never sent again\n%s", second)
	var res protocol.TurnResult
	require.NoError(t, dev.Client.GetWorkflow(ctx, protocol.TurnWorkflowID("discord:"+discordDM), "").Get(ctx, &res))
	var shown []string
	for _, m := range peer.Messages(discordDM) {
		shown = append(shown, m.Content)
	}
	require.Equal(t, parts, shown, "parts 1, 2 and 3, each once")
	require.Equal(t, 4, peer.CallsTo("POST", "/channels/"+discordDM+"/messages"), "parts 1 and 2, the held part 3, part 3 again")
	require.Contains(t, second.String(), "delivery resumed", "the second gateway picked up where the first stopped")
	require.Equal(t, 1, model.Count(), "the answer was not generated again")
}
