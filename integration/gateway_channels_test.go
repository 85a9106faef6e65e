package integration

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels/discord/discordpeer"
	"github.com/nanobot-durable/nanobot/channels/email/mailpeer"
	"github.com/nanobot-durable/nanobot/channels/matrix/dendritepeer"
	"github.com/nanobot-durable/nanobot/channels/slack/slackpeer"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// TestOneGatewayHoldsEveryChannel: one `nanobot gateway` with Telegram,
// Slack, Discord, Email, Matrix and the API enabled holds a conversation on
// each, against the peers (telegram-test-api, Slack Socket Mode and Discord
// at the wire, a real Dovecot with an SMTP recorder, a real dendrite, go-openai).
func TestOneGatewayHoldsEveryChannel(t *testing.T) {
	tg := startTelegramEmulator(t)
	peer := slackpeer.New(t)
	imap, smtp := mailpeer.StartIMAP(t), mailpeer.StartSMTP(t)
	hs := dendritepeer.StartDendrite(t)
	dc := discordpeer.New(t)
	dc.DM(discordDM)
	bot, alice := hs.RegisterUser(t, "nanobot"), hs.RegisterUser(t, "alice")
	dev := testenv.StartDevServer(t)
	// Each channel's question gets its own answer, whatever order they arrive in.
	model := modeltest.New().Handle(func(req *modeltest.RecordedRequest) modeltest.Step {
		last := req.Messages[len(req.Messages)-1].Content
		switch {
		case strings.Contains(last, "from telegram"):
			return modeltest.Text("Hello, Telegram.")
		case strings.Contains(last, "from slack"):
			return modeltest.Text("Hello, Slack.")
		case strings.Contains(last, "from the api"):
			return modeltest.Text("Hello, API.")
		case strings.Contains(last, "from discord"):
			return modeltest.Text("Hello, Discord.")
		case strings.Contains(last, "from email"):
			return modeltest.Text("Hello, Email.")
		case strings.Contains(last, "from matrix"):
			return modeltest.Text("Hello, Matrix.")
		}
		return modeltest.Text("Hello again.")
	})
	defer model.Close()
	apiPort := testenv.FreePort(t)
	home := testenv.NewHome(t, model.URL(), map[string]any{
		"channels": map[string]any{
			"telegram": map[string]any{"enabled": true, "token": tg.Token, "apiBase": tg.URL, "allowFrom": []string{"1001"}},
			"slack": map[string]any{"enabled": true, "botToken": "xoxb-e2e", "appToken": "xapp-e2e", "apiBase": peer.APIURL(),
				"allowFrom": []string{"U0ALICE01"}},
			"email": map[string]any{"enabled": true, "consentGranted": true,
				"imapHost": imap.Host, "imapPort": imap.Port, "imapUsername": imap.User, "imapPassword": imap.Pass, "imapUseSsl": false,
				"smtpHost": smtp.Host, "smtpPort": smtp.Port, "smtpUsername": smtp.User, "smtpPassword": smtp.Pass, "smtpUseTls": false,
				"fromAddress": mailpeer.User, "allowFrom": []string{"alice@example.org"}, "verifyDkim": false, "verifySpf": false},
			"discord": map[string]any{"enabled": true, "token": discordpeer.Token, "apiBase": dc.URL(),
				"allowFrom": []string{discordAlice.ID}, "workingEmoji": ""},
			"matrix": map[string]any{"enabled": true, "homeserver": hs.URL, "userId": bot.ID, "accessToken": bot.Token,
				"deviceId": bot.DeviceID, "allowFrom": []string{alice.ID}},
		},
		"api": map[string]any{"enabled": true, "port": apiPort},
	})
	_, out, errOut := startNanobot(t, home.Env(dev.Addr), "gateway")
	require.Eventually(t, func() bool { return peer.Connections() == 1 }, 90*time.Second, 50*time.Millisecond, "%s\n%s", out, errOut)
	peer.Hello()
	require.Eventually(t, func() bool {
		s := out.String()
		return strings.Contains(s, "  telegram: @") && strings.Contains(s, "  slack: Socket Mode") && strings.Contains(s, "  api: http://127.0.0.1:") &&
			strings.Contains(s, "  email: "+mailpeer.User) && strings.Contains(s, "  matrix: "+bot.ID) && strings.Contains(s, "  discord: @")
	}, 60*time.Second, 50*time.Millisecond, "the banner names every channel:\n%s", out)
	require.Contains(t, out.String(), "Channels: [api discord email matrix slack telegram]")
	require.Eventually(t, dc.Connected, time.Minute, 50*time.Millisecond, "the Discord gateway never identified")
	hi := dc.Say(discordpeer.Incoming{ChannelID: discordDM, Author: discordAlice, Content: "hi from discord"})

	tg.say(t, tgUser{ID: 1001, FirstName: "Alice", Username: "alice"}, 1001, "private", "hi from telegram")
	peer.Push("env-1", "Ev0001", 0, slackpeer.AppMention("C0E2E0001", "U0ALICE01", "1700000000.000100", "", "<@"+slackpeer.BotUserID+"> hi from slack"))
	cfg := openai.DefaultConfig("")
	cfg.BaseURL = "http://127.0.0.1:" + strconv.Itoa(apiPort) + "/v1"
	resp, err := openai.NewClientWithConfig(cfg).CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "hi from the api"}},
	})
	require.NoError(t, err)
	require.Equal(t, "Hello, API.", resp.Choices[0].Message.Content)
	imap.Deliver(mailpeer.Compose("hi from email\n", "From: Alice <alice@example.org>", "To: "+mailpeer.User,
		"Subject: Hello", "Message-ID: <every-1@example.org>", "Date: Mon, 02 Jun 2025 10:00:00 +0000",
		"MIME-Version: 1.0", "Content-Type: text/plain; charset=utf-8"))
	dm := alice.CreateRoom(t, true, bot)
	require.Eventually(t, func() bool { return alice.Joined(t, dm, bot) }, 60*time.Second, 50*time.Millisecond, "the bot joins the Matrix DM")
	asked := alice.SendText(t, dm, "hi from matrix")

	require.Eventually(t, func() bool {
		msgs := tg.botMessages(t, 1001)
		return len(msgs) == 1 && msgs[0].Text == "Hello, Telegram."
	}, 60*time.Second, 50*time.Millisecond, "telegram reply")
	require.Eventually(t, func() bool {
		posts := slackThreadPosts(peer, "C0E2E0001", "1700000000.000100")
		if len(posts) != 1 {
			return false
		}
		shown, _ := peer.Shown("C0E2E0001", posts[0].TS)
		return shown == "Hello, Slack."
	}, 60*time.Second, 50*time.Millisecond, "slack reply in the thread")
	require.Eventually(t, func() bool {
		mails := smtp.Mails()
		return len(mails) == 1 && strings.Contains(mails[0].Text, "Hello, Email.") && mails[0].Header.Get("In-Reply-To") == "<every-1@example.org>"
	}, 60*time.Second, 50*time.Millisecond, "email reply, threaded")
	require.Eventually(t, func() bool {
		all := alice.Messages(t, dm)
		mine := dendritepeer.From(all, bot)
		return len(mine) == 1 && dendritepeer.ShownBody(all, mine[0]) == "Hello, Matrix." && mine[0].ReplyTo() == asked
	}, 60*time.Second, 50*time.Millisecond, "matrix reply to alice's event")
	require.Eventually(t, func() bool {
		msgs := dc.Messages(discordDM)
		return len(msgs) == 1 && msgs[0].Content == "Hello, Discord." && msgs[0].ReplyTo == hi
	}, 60*time.Second, 50*time.Millisecond, "discord reply to alice's message")
	require.Equal(t, 6, model.Count(), "one model call per channel's message")
	for _, key := range []string{"telegram:1001", "slack:C0E2E0001:1700000000.000100", "discord:" + discordDM, "api:default", "email:alice@example.org", "matrix:" + dm} {
		_, msgs := sessionLines(t, home, key)
		require.Len(t, msgs, 2, "session %s: the message and its reply", key)
	}
	requireChannelsUp(t, home.Env(dev.Addr), "discord", "email", "matrix", "slack", "telegram")
	require.Equal(t, "running", channelStates(t, home.Env(dev.Addr))["api"].Connected, "the API cannot tell more than running")
}
