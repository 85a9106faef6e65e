package integration

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/pairing"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// TestTelegramEndToEnd drives the real gateway binary against
// telegram-test-api (the Bot API emulator from npm), the real temporal-dev
// and the scripted model: /start, a streamed reply with a tool call in
// between, a group where only the message that mentions the bot is
// answered, and a stranger who gets a pairing code, is approved, and is
// answered.
func TestTelegramEndToEnd(t *testing.T) {
	tg := startTelegramEmulator(t)
	dev := testenv.StartDevServer(t)
	model := modeltest.New()
	defer model.Close()
	home := testenv.NewHome(t, model.URL(), map[string]any{
		"channels": map[string]any{
			"sendToolHints": true,
			"telegram": map[string]any{
				"enabled": true, "token": tg.Token, "apiBase": tg.URL,
				"allowFrom": []string{"1001"}, "streamEditInterval": 0.1,
			},
		},
	})
	require.NoError(t, os.WriteFile(filepath.Join(home.Workspace, "notes.md"), []byte("# Notes\nstatus: draft\n"), 0o644))
	logs := startChannelGateway(t, home.Env(dev.Addr), "telegram")
	require.Contains(t, logs.String(), "@TestNameBot")

	alice := tgUser{ID: 1001, FirstName: "Alice", Username: "alice"}
	waitFor := func(chatID int64, what string, cond func([]botMessage) bool) []botMessage {
		t.Helper()
		var msgs []botMessage
		require.Eventually(t, func() bool {
			msgs = tg.botMessages(t, chatID)
			return cond(msgs)
		}, 90*time.Second, 50*time.Millisecond, "%s; bot messages: %+v\ngateway:\n%s", what, msgs, logs.String())
		return msgs
	}
	lastIs := func(text string) func([]botMessage) bool {
		return func(m []botMessage) bool { return len(m) > 0 && m[len(m)-1].Text == text }
	}

	// /start is answered by the channel: the model is not asked.
	tg.say(t, alice, 1001, "private", "/start")
	waitFor(1001, "the /start greeting", lastIs("👋 Hi Alice! I'm nanobot.\n\nSend me a message and I'll respond!\nType /help to see available commands."))
	require.Equal(t, 0, model.Count())

	// A DM: a tool call, its hint, then the reply streamed into one message.
	model.Script(
		modeltest.ToolCalls(modeltest.Call{ID: "r1", Name: "read_file", Args: `{"path":"notes.md"}`}),
		modeltest.Text("Your notes say the status is **draft**.").ChunkDelay(500*time.Millisecond),
	)
	tg.say(t, alice, 1001, "private", "what do my notes say?")
	final := "Your notes say the status is <b>draft</b>."
	seen := map[int][]string{} // message id → the texts it showed, in order
	msgs := waitFor(1001, "the streamed reply", func(m []botMessage) bool {
		for _, b := range m {
			if texts := seen[b.ID]; len(texts) == 0 || texts[len(texts)-1] != b.Text {
				seen[b.ID] = append(seen[b.ID], b.Text)
			}
		}
		return len(m) > 0 && m[len(m)-1].Text == final
	})
	require.Len(t, msgs, 3, "greeting, tool hint, reply: %+v", msgs)
	hint, reply := msgs[1], msgs[2]
	require.Equal(t, "<blockquote expandable>↳ read_file notes.md</blockquote>", hint.Text)
	require.Equal(t, "HTML", hint.ParseMode)
	require.Equal(t, "HTML", reply.ParseMode)
	drawn := seen[reply.ID]
	require.Greater(t, len(drawn), 1, "the reply was drawn before it was complete: %q", drawn)
	require.True(t, strings.HasPrefix("Your notes say the status is **draft**.", drawn[0]), "first it showed a beginning: %q", drawn)
	require.Equal(t, 2, model.Count())
	toolResult := model.Requests()[1].Messages
	require.Equal(t, chat.RoleTool, toolResult[len(toolResult)-1].Role)
	require.Contains(t, toolResult[len(toolResult)-1].Content, "status: draft", "the model got the file")

	// A group: a message without a mention is ignored; the next one, which
	// mentions the bot, is the one answered, and the only one the model read.
	model.Script(modeltest.Text("Hi group!"))
	tg.say(t, alice, -2001, "group", "hello everyone, lunch at noon?")
	tg.say(t, alice, -2001, "group", "@TestNameBot what's up?")
	waitFor(-2001, "the group reply", lastIs("Hi group!"))
	require.Len(t, tg.botMessages(t, -2001), 1)
	require.Equal(t, 3, model.Count())
	var users []string
	for _, m := range model.Requests()[2].Messages {
		if m.Role == chat.RoleUser {
			users = append(users, m.Content)
		}
	}
	require.Len(t, users, 1, "the group session holds one message: %q", users)
	require.True(t, strings.HasPrefix(users[0], "what's up?"), "the mention is stripped: %q", users[0])
	require.NotContains(t, users[0], "lunch")

	// A stranger gets a pairing code and the model is never called.
	bob := tgUser{ID: 3003, FirstName: "Bob", Username: "bob"}
	tg.say(t, bob, 3003, "private", "hi, can I use you?")
	codeRe := regexp.MustCompile(`pairing code is ([A-Z0-9]{8})`)
	got := waitFor(3003, "a pairing code", func(m []botMessage) bool { return len(m) == 1 && codeRe.MatchString(m[0].Text) })
	code := codeRe.FindStringSubmatch(got[0].Text)[1]
	require.Equal(t, 3, model.Count(), "nothing reached the model")

	// Approved, the next message goes through.
	_, err := pairing.NewStore(config.ConfigDir(home.ConfigPath)).Approve(code)
	require.NoError(t, err)
	model.Script(modeltest.Text("Welcome, Bob."))
	tg.say(t, bob, 3003, "private", "hi again")
	waitFor(3003, "bob's reply", lastIs("Welcome, Bob."))
	require.Equal(t, 4, model.Count())

	// The emulator has no sendChatAction: said once in the log, never a failed reply.
	require.Equal(t, 1, strings.Count(logs.String(), "telegram typing failed"), logs.String())
}
