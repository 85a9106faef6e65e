package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/workers"
)

// TestTwoInstancesOnOneTemporalStayApart: two nanobots on one temporal-dev
// and one namespace, the second named by gateway.instance, talk in a chat of
// the same key. Each message is answered by its own instance's worker and
// model and journaled in its own home; each has its own Dream schedule, run
// by its own worker.
func TestTwoInstancesOnOneTemporalStayApart(t *testing.T) {
	dev := testenv.StartDevServer(t)
	modelA, modelB := answering(map[string]string{"": "I am A."}), answering(map[string]string{"": "I am B."})
	defer modelA.Close()
	defer modelB.Close()
	homeA := testenv.NewHome(t, modelA.URL(), nil)
	homeB := testenv.NewHome(t, modelB.URL(), map[string]any{"gateway": map[string]any{"instance": "b"}})
	_, logA := startWorker(t, homeA.Env(dev.Addr))
	_, logB := startWorker(t, homeB.Env(dev.Addr))
	ch := startRecordingChannel(t, dev.Client, "replies-a", "replies-b")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	settings := testenv.Settings(protocol.Settings{Model: "test-model"})
	busA := &channels.Bus{Client: dev.Client, Settings: settings}
	busB := &channels.Bus{Client: dev.Client, Settings: settings, Instance: "b"}
	for i := 1; i <= 2; i++ {
		_, err := busA.Publish(ctx, protocol.Inbound{ID: fmt.Sprintf("a%d", i), SessionKey: "cli:shared", Route: protocol.Route{Channel: "cli", ChatID: "shared", Queue: "replies-a"}, Content: "who are you?", SentAt: time.Now()})
		require.NoError(t, err)
		_, err = busB.Publish(ctx, protocol.Inbound{ID: fmt.Sprintf("b%d", i), SessionKey: "cli:shared", Route: protocol.Route{Channel: "cli", ChatID: "shared", Queue: "replies-b"}, Content: "who are you?", SentAt: time.Now()})
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool {
		a := ch.answered()
		return a["a1"] > 0 && a["a2"] > 0 && a["b1"] > 0 && a["b2"] > 0
	}, time.Minute, 20*time.Millisecond, "not every message was answered; worker A:\n%s\nworker B:\n%s", logA, logB)
	for _, d := range ch.Deliveries() {
		want := map[string]string{"replies-a": "I am A.", "replies-b": "I am B."}[d.Route.Queue]
		require.Equal(t, want, d.Text, "a reply on %s came from the other instance", d.Route.Queue)
	}
	for home, want := range map[*testenv.Home]string{homeA: "I am A.", homeB: "I am B."} {
		_, msgs := sessionLines(t, home, "cli:shared")
		var answers []string
		for _, m := range msgs {
			if m.Role == "assistant" && m.Content != "" {
				answers = append(answers, m.Content)
			}
		}
		require.NotEmpty(t, answers)
		for _, a := range answers {
			require.Equal(t, want, a, "a home journaled the other instance's answer")
		}
	}

	// Each instance's Dream is a schedule of its own, fired on its own queue.
	for _, home := range []*testenv.Home{homeA, homeB} {
		cfg, _, err := config.Load(home.ConfigPath)
		require.NoError(t, err)
		require.NoError(t, workers.EnsureUpkeep(ctx, dev.Client, cfg))
	}
	for id, queue := range map[string]string{"dream": "nanobot", "b.dream": "b.nanobot"} {
		desc, err := dev.Client.ScheduleClient().GetHandle(ctx, id).Describe(ctx)
		require.NoError(t, err, "schedule %s", id)
		action, ok := desc.Schedule.Action.(*client.ScheduleWorkflowAction)
		require.True(t, ok)
		require.Equal(t, queue, action.TaskQueue, "schedule %s", id)
	}
	out, errOut, code := runNanobot(t, homeB.Env(dev.Addr), "cron", "run", "dream")
	require.Equal(t, 0, code, "cron run dream in B: %s %s", out, errOut)
	require.Eventually(t, func() bool {
		resp, err := dev.Client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query: fmt.Sprintf("WorkflowType = '%s' AND TaskQueue = 'b.nanobot' AND ExecutionStatus = 'Completed'", protocol.DreamWorkflowName)})
		return err == nil && len(resp.GetExecutions()) == 1 && strings.HasPrefix(resp.GetExecutions()[0].GetExecution().GetWorkflowId(), "b.dream")
	}, time.Minute, 50*time.Millisecond, "B's Dream did not run on B's queue; worker B:\n%s", logB)
	resp, err := dev.Client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
		Query: fmt.Sprintf("WorkflowType = '%s' AND TaskQueue = 'nanobot'", protocol.DreamWorkflowName)})
	require.NoError(t, err)
	require.Empty(t, resp.GetExecutions(), "running B's Dream started A's")
}
