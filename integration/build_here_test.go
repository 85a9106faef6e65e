package integration

import (
	"bytes"
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/internal/pgtest"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// scheduledOn lists the queues a run scheduled (non-local) activities of type name on.
func scheduledOn(t *testing.T, dev *testenv.DevServer, workflowID, name string) []string {
	var queues []string
	for _, ev := range testenv.History(t, dev.Client, workflowID, "").Events {
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == name {
			queues = append(queues, a.GetTaskQueue().GetName())
		}
	}
	return queues
}

// TestBuildRunsOnTheWorkspaceHostWithoutAQueueHop: with state in PostgreSQL, BUILD belongs to the
// workspace host. A turn run by the workspace host's own worker builds there as a local activity
// (no activity task through the workspace queue); a turn run by a stateless worker still sends
// BUILD to the workspace queue, where it waits until the workspace host polls.
func TestBuildRunsOnTheWorkspaceHostWithoutAQueueHop(t *testing.T) {
	url := pgtest.Database(t)
	dev := testenv.StartDevServer(t)
	model := modeltest.New().Handle(func(*modeltest.RecordedRequest) modeltest.Step { return modeltest.Text("built") })
	defer model.Close()
	home := testenv.NewHome(t, model.URL(), map[string]any{"database": map[string]any{"url": url}})
	settings := testenv.Settings(protocol.Settings{Model: "test-model", WorkspaceQueue: protocol.WorkspaceTaskQueue})
	bus := &channels.Bus{Client: dev.Client, Settings: settings}
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	turn := func(chatID string) string {
		key := protocol.SessionKey("cli", chatID)
		_, err := bus.Publish(ctx, protocol.Inbound{ID: chatID, SessionKey: key, Route: protocol.Route{Channel: "cli", ChatID: chatID}, Content: "hi", SentAt: time.Now()})
		require.NoError(t, err)
		return protocol.TurnWorkflowID(key)
	}
	var logs *bytes.Buffer
	done := func(id string) {
		var res protocol.TurnResult
		require.NoError(t, dev.Client.GetWorkflow(ctx, id, "").Get(ctx, &res), "worker log:\n%s", logs)
		require.Equal(t, protocol.StopCompleted, res.StopReason)
	}

	// A stateless worker alone: BUILD waits on the workspace queue.
	var stateless *exec.Cmd
	stateless, logs = startWorker(t, home.Env(dev.Addr), "--workspace=false")
	away := turn("away")
	require.Eventually(t, func() bool { return len(scheduledOn(t, dev, away, protocol.ActivityBuild)) == 1 }, time.Minute, 20*time.Millisecond,
		"BUILD never reached the workspace queue; worker log:\n%s", logs)
	desc, err := dev.Client.DescribeWorkflowExecution(ctx, away, "")
	require.NoError(t, err)
	require.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, desc.GetWorkflowExecutionInfo().GetStatus(), "the turn waits for the workspace host")
	_ = stateless.Process.Kill()
	_, _ = stateless.Process.Wait()

	// The workspace host: it answers the waiting BUILD, and builds its own turns in place.
	_, logs = startWorker(t, home.Env(dev.Addr), "--workspace")
	done(away)
	require.Equal(t, []string{protocol.WorkspaceTaskQueue}, scheduledOn(t, dev, away, protocol.ActivityBuild))
	here := turn("here")
	done(here)
	testenv.RecordHistory(t, dev.Client, here, "", "build_on_workspace_host")
	require.Empty(t, scheduledOn(t, dev, here, protocol.ActivityBuild), "the workspace host's turn sent BUILD through the queue; log:\n%s", logs)
}
