package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/nanobot-durable/nanobot/protocol"
)

// DiskGCWorkflow applies the retention settings once, on the workspace
// host: a sweep of a large home may take minutes, and a failed one is
// simply the next firing's work.
func DiskGCWorkflow(ctx workflow.Context, in protocol.DiskGCInput) (*protocol.DiskGCResult, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue: instanceOf(ctx).WorkspaceQueue(), StartToCloseTimeout: 15 * time.Minute,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: 10 * time.Second, BackoffCoefficient: 2, MaximumAttempts: 3},
		Summary:     "apply the retention settings",
	})
	var res protocol.DiskGCResult
	if err := workflow.ExecuteActivity(ctx, protocol.ActivityDiskGC, in).Get(ctx, &res); err != nil {
		return nil, err
	}
	return &res, nil
}
