package integration

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// TestReplyWaitsForTheGateway: the gateway holding the Telegram connection
// stops after the turn started and before it replied; a worker finishes the
// turn; the reply waits on the channel's queue (not lost after a minute);
// when a gateway comes back it is sent, once, and the restarted gateway does
// not take the user's message a second time.
func TestReplyWaitsForTheGateway(t *testing.T) {
	tg := startTelegramEmulator(t)
	dev := testenv.StartDevServer(t)
	model := modeltest.New(modeltest.Block().Text("Here is the answer.")).
		Handle(func(*modeltest.RecordedRequest) modeltest.Step { return modeltest.Text("Here is the answer.") })
	defer model.Close()
	home := testenv.NewHome(t, model.URL(), map[string]any{
		"channels": map[string]any{"telegram": map[string]any{
			"enabled": true, "token": tg.Token, "apiBase": tg.URL, "allowFrom": []string{"1001"}, "streaming": false,
		}},
	})
	env := home.Env(dev.Addr, "NANOBOT_STOP_TIMEOUT_S=1", "NANOBOT_LLM_HEARTBEAT_TIMEOUT_S=2")
	startWorker(t, env)
	gw, out, errOut := startNanobot(t, env, "gateway")
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "  telegram: @") },
		time.Minute, 50*time.Millisecond, "%s\n%s", out, errOut)

	alice := tgUser{ID: 1001, FirstName: "Alice", Username: "alice"}
	tg.say(t, alice, 1001, "private", "what is the answer?")
	require.Eventually(t, func() bool { return model.Waiting() == 1 }, time.Minute, 50*time.Millisecond, "%s\n%s", out, errOut)

	require.NoError(t, gw.Process.Signal(syscall.SIGTERM))
	_, _ = gw.Process.Wait()
	model.Release()

	// The turn finishes on the worker; its delivery waits for a gateway.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	id := protocol.TurnWorkflowID("telegram:1001")
	var waited, scheduleToStart time.Duration
	require.Eventually(t, func() bool {
		desc, err := dev.Client.DescribeWorkflowExecution(ctx, id, "")
		if err != nil {
			return false
		}
		for _, a := range desc.GetPendingActivities() {
			if a.GetActivityType().GetName() != protocol.ActivityDeliver || a.GetState() != enumspb.PENDING_ACTIVITY_STATE_SCHEDULED {
				continue
			}
			scheduleToStart = a.GetActivityOptions().GetScheduleToStartTimeout().AsDuration()
			waited = time.Since(a.GetScheduledTime().AsTime())
			return waited >= 5*time.Second // still waiting, well after the gateway went away
		}
		return false
	}, time.Minute, 100*time.Millisecond, "the reply waits on the telegram queue")
	require.GreaterOrEqual(t, scheduleToStart, time.Hour, "a reply waits for hours, not a minute")
	require.Empty(t, tg.botMessages(t, 1001), "no gateway, no reply yet")

	startChannelGateway(t, env, "telegram")
	var res protocol.TurnResult
	require.NoError(t, dev.Client.GetWorkflow(ctx, id, "").Get(ctx, &res))
	require.Equal(t, "Here is the answer.", res.ReplyPreview)
	require.Eventually(t, func() bool { return len(tg.botMessages(t, 1001)) == 1 }, 30*time.Second, 50*time.Millisecond)
	msgs := tg.botMessages(t, 1001)
	require.Equal(t, "Here is the answer.", msgs[0].Text)

	// A later message is answered too, and the first was not taken twice.
	model.Handle(func(*modeltest.RecordedRequest) modeltest.Step { return modeltest.Text("Second answer.") })
	tg.say(t, alice, 1001, "private", "and another?")
	require.Eventually(t, func() bool { return len(tg.botMessages(t, 1001)) == 2 }, time.Minute, 50*time.Millisecond)
	require.Equal(t, "Second answer.", tg.botMessages(t, 1001)[1].Text)
	users := 0
	for _, r := range model.Requests() {
		last := r.Messages[len(r.Messages)-1]
		if last.Role == "user" && strings.Contains(last.Content, "what is the answer?") {
			users++
		}
	}
	require.LessOrEqual(t, users, 2, "the first message was asked about at most twice: the call cut by the stop, and its retry")
	_, journal := sessionLines(t, home, "telegram:1001")
	asked := 0
	for _, m := range journal {
		if m.Role == "user" && strings.Contains(m.Content, "what is the answer?") {
			asked++
		}
	}
	require.Equal(t, 1, asked, "the restarted gateway did not hand the first message to the agent again")
}
