package integration

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
	"github.com/nanobot-durable/nanobot/schedules"
)

// TestServerRestartMidTurn stops temporal-dev while a turn's tool call is
// done and its model call hangs, lets the model answer while no server
// runs, and starts the server again on the same SQLite file: the turn
// finishes with its reply and its write happened once.
func TestServerRestartMidTurn(t *testing.T) {
	port := testenv.FreePort(t)
	db := filepath.Join(t.TempDir(), "temporal.db")
	dev := testenv.StartDevServerOn(t, port, "--db-filename", db)
	model := modeltest.New(
		modeltest.ToolCalls(modeltest.Call{ID: "w1", Name: "write_file", Args: `{"path":"out.txt","content":"once"}`}),
		modeltest.Block().Text("Written, through a restart."),
	).Handle(func(*modeltest.RecordedRequest) modeltest.Step { return modeltest.Text("Written, through a restart.") })
	defer model.Close()
	home := testenv.NewHome(t, model.URL(), nil)
	_, logs := startWorker(t, home.Env(dev.Addr))
	bus := &channels.Bus{Client: dev.Client, Settings: testenv.Settings(protocol.Settings{Model: "test-model", Stream: true})}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, err := bus.Publish(ctx, protocol.Inbound{ID: "r1", SessionKey: "cli:restart", Route: protocol.Route{Channel: "cli", ChatID: "restart"}, Content: "write it", SentAt: time.Now()})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return model.Waiting() == 1 }, time.Minute, 20*time.Millisecond, "worker log:\n%s", logs)

	dev.Stop()
	model.Release() // the model answers while no server runs
	dev = testenv.StartDevServerOn(t, port, "--db-filename", db)
	require.Equal(t, "127.0.0.1:"+strconv.Itoa(port), dev.Addr)

	var res protocol.TurnResult
	require.NoError(t, dev.Client.GetWorkflow(ctx, protocol.TurnWorkflowID("cli:restart"), "").Get(ctx, &res), "worker log:\n%s", logs)
	require.Equal(t, protocol.StopCompleted, res.StopReason)
	require.Equal(t, "Written, through a restart.", res.ReplyPreview)
	require.LessOrEqual(t, model.Count(), 3, "the model call cut by the restart is asked at most once more")
	data, err := os.ReadFile(filepath.Join(home.Workspace, "out.txt"))
	require.NoError(t, err)
	require.Equal(t, "once", string(data))
	_, msgs := sessionLines(t, home, "cli:restart")
	tools := 0
	for _, m := range msgs {
		if m.Role == "tool" {
			tools++
		}
	}
	require.Equal(t, 1, tools, "one tool row")
}

// TestServerRestartBetweenScheduleFirings stops temporal-dev between two
// firings of a schedule (idle compaction every 2 s) and starts it again on
// the same SQLite file: the schedule is still there and fires again.
func TestServerRestartBetweenScheduleFirings(t *testing.T) {
	port := testenv.FreePort(t)
	db := filepath.Join(t.TempDir(), "temporal.db")
	dev := testenv.StartDevServerOn(t, port, "--db-filename", db)
	model := modeltest.New()
	defer model.Close()
	home := testenv.NewHome(t, model.URL(), nil)
	_, logs := startWorker(t, home.Env(dev.Addr))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	require.NoError(t, schedules.Ensure(ctx, dev.Client, schedules.Spec{
		ID: "restart-test", Name: "restart test", Kind: "test", Every: 2 * time.Second,
		Workflow: protocol.IdleCompactWorkflowName, TaskQueue: protocol.TaskQueue,
		Args: []any{protocol.IdleCompactInput{}},
	}))
	fired := func(c client.Client) int64 {
		d, err := c.ScheduleClient().GetHandle(ctx, "restart-test").Describe(ctx)
		if err != nil {
			return -1
		}
		return int64(d.Info.NumActions)
	}
	require.Eventually(t, func() bool { return fired(dev.Client) >= 1 }, time.Minute, 100*time.Millisecond, "worker log:\n%s", logs)
	before := fired(dev.Client)
	dev.Stop()
	dev = testenv.StartDevServerOn(t, port, "--db-filename", db)
	require.Eventually(t, func() bool { return fired(dev.Client) > before }, time.Minute, 100*time.Millisecond,
		"the schedule did not fire after the restart; worker log:\n%s", logs)
}
