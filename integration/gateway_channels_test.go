package integration

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels/slack/slackpeer"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// TestOneGatewayHoldsEveryChannel: one `nanobot gateway` with Telegram,
// Slack and the API enabled holds a conversation on each, against the
// peers (telegram-test-api, slack-go's slacktest in Socket Mode, go-openai).
func TestOneGatewayHoldsEveryChannel(t *testing.T) {
	tg := startTelegramEmulator(t)
	peer := slackpeer.New(t)
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
		},
		"api": map[string]any{"enabled": true, "port": apiPort},
	})
	_, out, errOut := startNanobot(t, home.Env(dev.Addr), "gateway")
	require.Eventually(t, func() bool { return peer.Connections() == 1 }, 90*time.Second, 50*time.Millisecond, "%s\n%s", out, errOut)
	peer.Hello()
	require.Eventually(t, func() bool {
		s := out.String()
		return strings.Contains(s, "  telegram: @") && strings.Contains(s, "  slack: Socket Mode") && strings.Contains(s, "  api: http://127.0.0.1:")
	}, 60*time.Second, 50*time.Millisecond, "the banner names every channel:\n%s", out)
	require.Contains(t, out.String(), "Channels: [api slack telegram]")

	tg.say(t, tgUser{ID: 1001, FirstName: "Alice", Username: "alice"}, 1001, "private", "hi from telegram")
	peer.Push("env-1", "Ev0001", 0, slackpeer.AppMention("C0E2E0001", "U0ALICE01", "1700000000.000100", "", "<@"+slackpeer.BotUserID+"> hi from slack"))
	cfg := openai.DefaultConfig("")
	cfg.BaseURL = "http://127.0.0.1:" + strconv.Itoa(apiPort) + "/v1"
	resp, err := openai.NewClientWithConfig(cfg).CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "hi from the api"}},
	})
	require.NoError(t, err)
	require.Equal(t, "Hello, API.", resp.Choices[0].Message.Content)

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
	require.Equal(t, 3, model.Count(), "one model call per channel's message")
	for _, key := range []string{"telegram:1001", "slack:C0E2E0001", "api:default"} {
		_, msgs := sessionLines(t, home, key)
		require.Len(t, msgs, 2, "session %s: the message and its reply", key)
	}
}
