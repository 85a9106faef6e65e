package integration

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// lastOf is the last message of a request with this role.
func lastOf(req *modeltest.RecordedRequest, role string) chat.Message {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == role {
			return req.Messages[i]
		}
	}
	return chat.Message{}
}

// TestSendSessionMessageBetweenTelegramChats: through the real gateway,
// Alice's chat finds Bob's by its @handle (list_sessions) and sends it a
// message expecting a reply; Bob's session takes it as a turn of its own
// and answers in Bob's chat; nobody replies, so after the timeout Alice's
// session is told, and answers that in Alice's chat.
func TestSendSessionMessageBetweenTelegramChats(t *testing.T) {
	tg := startTelegramEmulator(t)
	dev := testenv.StartDevServer(t)
	model := modeltest.New().Handle(func(req *modeltest.RecordedRequest) modeltest.Step {
		user, last := lastOf(req, chat.RoleUser), req.Messages[len(req.Messages)-1]
		switch {
		case last.Role == chat.RoleTool && last.Name == "list_sessions":
			var handles []string
			if json.Unmarshal([]byte(last.Content), &handles) != nil || len(handles) != 1 {
				return modeltest.Text("unexpected sessions: " + last.Content)
			}
			return modeltest.ToolCalls(modeltest.Call{ID: "send", Name: "send_session_message",
				Args: fmt.Sprintf(`{"to": %q, "content": "Bob, the build is green.", "expect_reply": true, "reply_timeout_seconds": 5}`, handles[0])})
		case last.Role == chat.RoleTool && last.Name == "send_session_message":
			return modeltest.Text("Tool said: " + last.Content)
		case strings.Contains(user.Content, "tell Bob"):
			return modeltest.ToolCalls(modeltest.Call{ID: "list", Name: "list_sessions", Args: `{}`})
		case strings.Contains(user.Content, "Bob, the build is green.") && strings.Contains(user.Content, "Reply with send_session_message."):
			return modeltest.Text("Bob's chat heard: the build is green.")
		case strings.HasPrefix(user.Content, "No reply from @"):
			return modeltest.Text("Alice's chat heard: " + strings.SplitN(user.Content, "\n", 2)[0])
		}
		return modeltest.Text("Hello.")
	})
	defer model.Close()
	home := testenv.NewHome(t, model.URL(), map[string]any{"channels": map[string]any{"telegram": map[string]any{
		"enabled": true, "token": tg.Token, "apiBase": tg.URL, "allowFrom": []string{"1001", "1002"},
	}}})
	logs := startChannelGateway(t, home.Env(dev.Addr), "telegram")
	alice := tgUser{ID: 1001, FirstName: "Alice", Username: "alice"}
	bob := tgUser{ID: 1002, FirstName: "Bob", Username: "bob"}

	tg.say(t, bob, 1002, "private", "hi")
	require.Eventually(t, func() bool { return slices.Contains(texts(t, tg, 1002), "Hello.") },
		time.Minute, 50*time.Millisecond, "Bob's session exists; gateway:\n%s", logs)

	tg.say(t, alice, 1001, "private", "tell Bob the build is green")
	var aliceGot, bobGot []string
	require.Eventually(t, func() bool {
		aliceGot, bobGot = texts(t, tg, 1001), texts(t, tg, 1002)
		return slices.Contains(bobGot, "Bob's chat heard: the build is green.") &&
			slices.ContainsFunc(aliceGot, func(s string) bool { return strings.HasPrefix(s, "Alice's chat heard: No reply from @") })
	}, 2*time.Minute, 100*time.Millisecond, "alice %v\nbob %v\ngateway:\n%s", aliceGot, bobGot, logs)
	require.Contains(t, aliceGot, "Tool said: Sent to @"+handleIn(t, aliceGot)+". A timeout notice will arrive after 5s unless it replies.")
	require.Contains(t, aliceGot, "Alice's chat heard: No reply from @"+handleIn(t, aliceGot)+" after 5 seconds.")
	testenv.RecordHistory(t, dev.Client, protocol.SessionReplyWaitID("telegram:1001", "telegram:1002"), "", "session_reply_timeout")

	_, bobMsgs := sessionLines(t, home, "telegram:1002")
	var delivered string
	for _, m := range bobMsgs {
		if m.Role == chat.RoleUser && strings.HasPrefix(m.Content, "Bob, the build is green.") {
			delivered = m.Content
		}
	}
	require.Contains(t, delivered, "Message from @", "Bob's session is told who sent it")
	require.NotContains(t, delivered, "telegram:1001", "by handle, never by Alice's chat id")
}

// handleIn is the handle Alice's tool result named.
func handleIn(t *testing.T, got []string) string {
	for _, s := range got {
		if rest, ok := strings.CutPrefix(s, "Tool said: Sent to @"); ok {
			name, _, _ := strings.Cut(rest, ".")
			return name
		}
	}
	t.Fatalf("no send in %v", got)
	return ""
}
