package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/nanobot-durable/nanobot/protocol"
)

// SessionReplyWaitWorkflow waits a durable timer for the target session's
// reply; the reply cancels it, else it tells the source none came.
func SessionReplyWaitWorkflow(ctx workflow.Context, in protocol.SessionReplyWait) error {
	if err := workflow.Sleep(ctx, time.Duration(in.TimeoutSeconds)*time.Second); err != nil {
		return err // cancelled: the reply came
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           instanceOf(ctx).TaskQueue(),
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: time.Minute, MaximumAttempts: 30},
		Summary:             "no reply from @" + in.TargetHandle,
	})
	return workflow.ExecuteActivity(actx, protocol.ActivitySessionReplyTimeout, in).Get(ctx, nil)
}
