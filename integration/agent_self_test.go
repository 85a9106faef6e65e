package integration

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// TestSelfSessionsAndPromptCommandsThroughTheGateway: issue 36's tools and
// commands not covered elsewhere, through the real gateway from a Telegram
// chat: /dream-prompt and /evaluator-prompt answer with nanobot's texts
// (init writes the editable copy), /help lists them; in a turn the model
// calls my (check), then search_sessions and read_session find and read what
// was said in another chat, and what they return reaches the chat.
func TestSelfSessionsAndPromptCommandsThroughTheGateway(t *testing.T) {
	tg := startTelegramEmulator(t)
	dev := testenv.StartDevServer(t)
	model := modeltest.New().Handle(func(req *modeltest.RecordedRequest) modeltest.Step {
		user, last := lastOf(req, chat.RoleUser), req.Messages[len(req.Messages)-1]
		switch {
		case last.Role == chat.RoleTool && last.Name == "my":
			return modeltest.ToolCalls(modeltest.Call{ID: "find", Name: "search_sessions", Args: `{"query":"pelican"}`})
		case last.Role == chat.RoleTool && last.Name == "search_sessions":
			if !strings.Contains(last.Content, `"session_key":"telegram:1002"`) {
				return modeltest.Text("search found nothing: " + last.Content)
			}
			return modeltest.ToolCalls(modeltest.Call{ID: "read", Name: "read_session", Args: `{"session_key":"telegram:1002","query":"pelican"}`})
		case last.Role == chat.RoleTool && last.Name == "read_session":
			return modeltest.Text("read: " + strings.ReplaceAll(last.Content, "\n", " | "))
		case strings.Contains(user.Content, "look at yourself"):
			return modeltest.ToolCalls(modeltest.Call{ID: "me", Name: "my", Args: `{"action":"check","key":"max_iterations"}`})
		}
		return modeltest.Text("Noted.")
	})
	defer model.Close()
	home := testenv.NewHome(t, model.URL(), map[string]any{"channels": map[string]any{"telegram": map[string]any{
		"enabled": true, "token": tg.Token, "apiBase": tg.URL, "allowFrom": []string{"1001", "1002"},
	}}})
	logs := startChannelGateway(t, home.Env(dev.Addr), "telegram")
	alice, bob := tgUser{ID: 1001, FirstName: "Alice", Username: "alice"}, tgUser{ID: 1002, FirstName: "Bob", Username: "bob"}
	answerIn := func(who tgUser, say, prefix string) string {
		t.Helper()
		before := len(texts(t, tg, who.ID))
		tg.say(t, who, who.ID, "private", say)
		var got string
		require.Eventually(t, func() bool {
			for _, s := range texts(t, tg, who.ID)[before:] {
				if strings.HasPrefix(s, prefix) {
					got = s
					return true
				}
			}
			return false
		}, 2*time.Minute, 50*time.Millisecond, "no answer to %q starting %q: %q\ngateway:\n%s", say, prefix, texts(t, tg, who.ID), logs)
		return got
	}
	answer := func(say, prefix string) string { t.Helper(); return answerIn(alice, say, prefix) }

	require.Contains(t, answer("/dream-prompt", "Dream memory instructions:"), "nanobot default")
	require.Contains(t, answer("/dream-prompt init", "Created Dream memory instructions"), "prompts/dream.md")
	require.FileExists(t, home.Workspace+"/prompts/dream.md")
	require.Contains(t, answer("/evaluator-prompt", "Heartbeat evaluator prompt:"), "nanobot default")
	help := answer("/help", "🐈 nanobot commands:")
	for _, name := range []string{"/restart", "/trigger", "/dream-prompt", "/evaluator-prompt", "/dream-log", "/dream-restore", "/skill", "/pairing"} {
		require.Contains(t, help, "\n"+name+" ")
	}

	answerIn(bob, "the pelican ate my sandwich", "Noted.")
	read := answer("please look at yourself", "read: ")
	require.Contains(t, read, "the pelican ate my sandwich", "read_session returned the earlier message found by search_sessions")
}
