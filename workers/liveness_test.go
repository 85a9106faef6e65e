package workers

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/nanobot-durable/nanobot/activities"
	"github.com/nanobot-durable/nanobot/internal/testenv"
)

// callHanging runs one attempt of an activity that never returns, with the
// heartbeat timeout below its start-to-close timeout as the turn's calls have.
func callHanging(ctx workflow.Context) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 3 * time.Second, HeartbeatTimeout: time.Second,
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1},
	})
	return workflow.ExecuteActivity(ctx, "hang").Get(ctx, nil)
}

// TestAHangingCallIsBoundedByItsStartToClose: an activity that hangs, deaf
// to its context (a stuck tool), is kept alive by the Liveness beats past
// its heartbeat timeout, and the beats do not keep it past its
// start-to-close timeout.
func TestAHangingCallIsBoundedByItsStartToClose(t *testing.T) {
	dev := testenv.StartDevServer(t)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	w := worker.New(dev.Client, "test-hang", worker.Options{Interceptors: []interceptor.WorkerInterceptor{&activities.Liveness{}}})
	w.RegisterWorkflow(callHanging)
	w.RegisterActivityWithOptions(func(context.Context) error { <-release; return nil }, activity.RegisterOptions{Name: "hang"})
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run, err := dev.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: "test-hang"}, callHanging)
	require.NoError(t, err)
	err = run.Get(ctx, nil)
	var te *temporal.TimeoutError
	require.True(t, errors.As(err, &te), "the call ended with %v", err)
	require.Equal(t, enumspb.TIMEOUT_TYPE_START_TO_CLOSE, te.TimeoutType(), "the beats must outlive the heartbeat timeout and not the start-to-close: %v", err)
}
