package integration

import (
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// texts are the bot's messages in a chat, oldest first.
func texts(t *testing.T, tg *tgEmulator, chat int64) []string {
	var out []string
	for _, m := range tg.botMessages(t, chat) {
		out = append(out, m.Text)
	}
	return out
}

// TestRestartCommandReexecsTheGateway: /restart over Telegram answers
// "Restarting...", the gateway re-executes itself (same process, a second
// banner), says "Restart completed in N s." in the chat that asked, and a
// turn that was in flight when it went down goes on in Temporal: its answer
// arrives after the restart, once.
func TestRestartCommandReexecsTheGateway(t *testing.T) {
	tg := startTelegramEmulator(t)
	dev := testenv.StartDevServer(t)
	model := modeltest.New(modeltest.Block().Text("The long answer.")).
		Handle(func(*modeltest.RecordedRequest) modeltest.Step { return modeltest.Text("The long answer.") })
	defer model.Close()
	home := testenv.NewHome(t, model.URL(), map[string]any{"channels": map[string]any{"telegram": map[string]any{
		"enabled": true, "token": tg.Token, "apiBase": tg.URL, "allowFrom": []string{"1001"},
	}}})
	env := home.Env(dev.Addr, "NANOBOT_STOP_TIMEOUT_S=1", "NANOBOT_LLM_HEARTBEAT_TIMEOUT_S=2")
	gw, out, errOut := startNanobot(t, env, "gateway")
	banners := func() int { return strings.Count(out.String(), "  telegram: ") }
	require.Eventually(t, func() bool { return banners() == 1 }, time.Minute, 50*time.Millisecond, "%s\n%s", out, errOut)

	alice := tgUser{ID: 1001, FirstName: "Alice", Username: "alice"}
	tg.say(t, alice, 1001, "private", "write the long answer")
	require.Eventually(t, func() bool { return model.Waiting() == 1 }, time.Minute, 50*time.Millisecond, "%s\n%s", out, errOut)

	tg.say(t, alice, 1001, "private", "/restart")
	require.Eventually(t, func() bool { return slices.Contains(texts(t, tg, 1001), "Restarting...") },
		time.Minute, 50*time.Millisecond, "%s\n%s", out, errOut)
	require.Eventually(t, func() bool { return banners() == 2 }, time.Minute, 50*time.Millisecond,
		"the gateway comes back\n%s\n%s", out, errOut)
	require.Nil(t, gw.ProcessState, "the same process, re-executed: it never exited")
	require.NoError(t, syscall.Kill(gw.Process.Pid, 0))
	require.Contains(t, out.String(), "restarting…")
	model.Release() // the call the old process made answers nobody

	var got []string
	require.Eventually(t, func() bool {
		got = texts(t, tg, 1001)
		return slices.Contains(got, "The long answer.") && slices.ContainsFunc(got, func(s string) bool {
			return strings.HasPrefix(s, "Restart completed in ") && strings.HasSuffix(s, "s.")
		})
	}, 2*time.Minute, 100*time.Millisecond, "%v\n%s\n%s", got, out, errOut)
	require.Less(t, slices.Index(got, "Restarting..."), slices.Index(got, "The long answer."), "the answer came after the restart")
	answers := 0
	for _, s := range got {
		if s == "The long answer." {
			answers++
		}
	}
	require.Equal(t, 1, answers, "answered once: %v", got)
	_, msgs := sessionLines(t, home, "telegram:1001")
	for _, m := range msgs {
		require.NotContains(t, m.Content, "/restart", "the gateway answered /restart; no turn saw it")
	}
}
