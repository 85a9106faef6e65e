package workers

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
)

// slowChannel is a chat whose Send is still running when the process stops.
type slowChannel struct{ sending chan struct{} }

func (c slowChannel) Name() string                                  { return "cli" }
func (c slowChannel) Start(context.Context, channels.Publish) error { return nil }
func (c slowChannel) Stop(context.Context) error                    { return nil }
func (c slowChannel) Send(context.Context, channels.Reply) error {
	close(c.sending)
	time.Sleep(300 * time.Millisecond)
	return nil
}

// deliverOnce is a turn's delivery to a process's own queue, as the turn schedules it.
func deliverOnce(ctx workflow.Context, queue string) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue: queue, ScheduleToStartTimeout: 15 * time.Second, StartToCloseTimeout: 2 * time.Minute,
	})
	in := protocol.DeliverInput{SessionKey: "cli:direct", Route: protocol.Route{Channel: "cli", ChatID: "direct", Queue: queue}, MessageIDs: []string{"m1"}, Text: "hi"}
	return workflow.ExecuteActivity(ctx, protocol.ActivityDeliver, in).Get(ctx, nil)
}

// TestStopReportsTheDeliveryInFlight: a CLI that leaves right after its
// reply was shown stops its workers and closes its connection; the
// delivery's completion must reach the server first, or the turn stays
// open for the delivery's 2-minute StartToClose (and the next CLI of the
// session waits for it).
func TestStopReportsTheDeliveryInFlight(t *testing.T) {
	dev := testenv.StartDevServer(t)
	home := testenv.NewHome(t, "http://127.0.0.1:1/v1", nil)
	cfg, _, err := config.Load(home.ConfigPath)
	require.NoError(t, err)

	w := worker.New(dev.Client, "test-turns", worker.Options{})
	w.RegisterWorkflow(deliverOnce)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)

	c, err := client.Dial(client.Options{HostPort: dev.Addr})
	require.NoError(t, err)
	ch := slowChannel{sending: make(chan struct{})}
	mgr := channels.NewManager()
	mgr.Add(ch)
	queue := "nanobot-cli-test"
	set, err := Start(c, Options{Config: cfg, Channels: mgr, DeliveryQueues: []string{queue}})
	require.NoError(t, err)

	run, err := dev.Client.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{TaskQueue: "test-turns"}, deliverOnce, queue)
	require.NoError(t, err)
	select {
	case <-ch.sending:
	case <-time.After(time.Minute):
		t.Fatal("the delivery did not reach the channel")
	}
	set.Stop() // what runtimeEnv.Close does when the CLI leaves
	c.Close()

	desc, err := dev.Client.DescribeWorkflowExecution(context.Background(), run.GetID(), run.GetRunID())
	require.NoError(t, err)
	require.Empty(t, desc.GetPendingActivities(), "the delivery's completion was lost when the process stopped")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, run.Get(ctx, nil))
}
