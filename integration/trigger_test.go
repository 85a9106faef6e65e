package integration

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// TestTriggerFromAChatAndTheCLI: /trigger in a Telegram chat answers with
// nanobot's text and the command; that command, run as a script would,
// puts the message into the chat's session, and the answer arrives there.
func TestTriggerFromAChatAndTheCLI(t *testing.T) {
	tg := startTelegramEmulator(t)
	dev := testenv.StartDevServer(t)
	model := modeltest.New().Handle(func(req *modeltest.RecordedRequest) modeltest.Step {
		if u := lastOf(req, chat.RoleUser); strings.HasPrefix(u.Content, "Local trigger received: nightly build") {
			return modeltest.Text("The nightly build is done.")
		}
		return modeltest.Text("Hello.")
	})
	defer model.Close()
	home := testenv.NewHome(t, model.URL(), map[string]any{"channels": map[string]any{"telegram": map[string]any{
		"enabled": true, "token": tg.Token, "apiBase": tg.URL, "allowFrom": []string{"1001"},
	}}})
	env := home.Env(dev.Addr)
	logs := startChannelGateway(t, env, "telegram")
	alice := tgUser{ID: 1001, FirstName: "Alice", Username: "alice"}

	tg.say(t, alice, 1001, "private", "/trigger nightly build")
	var created string
	require.Eventually(t, func() bool {
		for _, s := range texts(t, tg, 1001) {
			if strings.HasPrefix(s, "Trigger created: nightly build") {
				created = s
			}
		}
		return created != ""
	}, time.Minute, 50*time.Millisecond, "gateway:\n%s", logs)
	m := regexp.MustCompile(`^Trigger created: nightly build\nID: (trg_[A-Z2-9]{8})\n\nCommand:\nnanobot trigger (trg_[A-Z2-9]{8}) "message"$`).FindStringSubmatch(created)
	require.NotNil(t, m, created)
	require.Equal(t, m[1], m[2])

	out, errOut, code := runNanobot(t, env, "trigger", m[1], "it finished at 3am")
	require.Equal(t, 0, code, "%s\n%s", out, errOut)
	require.Regexp(t, `^Queued `+m[1]+` \(trigger-`+m[1]+`-[0-9a-f]+\)\n$`, out)
	require.Eventually(t, func() bool { return slices.Contains(texts(t, tg, 1001), "The nightly build is done.") },
		time.Minute, 50*time.Millisecond, "gateway:\n%s", logs)
	_, msgs := sessionLines(t, home, "telegram:1001")
	require.True(t, slices.ContainsFunc(msgs, func(m chat.Message) bool {
		return m.Role == chat.RoleUser && m.Content == "Local trigger received: nightly build\n\nit finished at 3am"
	}), "the session holds the delivery as nanobot's history does")

	_, errOut, code = runNanobot(t, env, "trigger", "trg_NOPE2345", "x")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "trigger not found: trg_NOPE2345")
}
