package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/nanobot-durable/nanobot/protocol"
)

// ScheduledTurnWorkflow is a cron job's firing. A Schedule cannot
// SignalWithStart, so this workflow does it: one activity publishes the
// job's message into its session; an "at" job then deletes its schedule.
func ScheduledTurnWorkflow(ctx workflow.Context, in protocol.ScheduledTurnInput) error {
	info := workflow.GetInfo(ctx)
	pub := protocol.PublishScheduledInput{Job: in, Fired: info.WorkflowExecution.ID + "/" + info.WorkflowExecution.RunID}
	if err := workflow.ExecuteActivity(upkeepCtx(ctx, "publish into "+in.SessionKey), protocol.ActivityPublishScheduled, pub).Get(ctx, nil); err != nil {
		return err
	}
	if in.Once {
		id := instanceOf(ctx).Name(protocol.CronScheduleID(in.JobID))
		if err := workflow.ExecuteActivity(upkeepCtx(ctx, "delete "+id), protocol.ActivityDeleteSchedule, id).Get(ctx, nil); err != nil {
			return err
		}
	}
	return nil
}
