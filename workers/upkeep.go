package workers

import (
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/nanobot-durable/nanobot/activities"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/workflows"
)

// registerUpkeep adds memory upkeep to the turn worker: Dream and idle
// compaction, cron jobs and the heartbeat (their schedules start them), the post-SAVE measure and their
// file activities. Consolidation itself runs on the LLM queue.
func registerUpkeep(w worker.Worker, acts *activities.Activities) {
	w.RegisterWorkflowWithOptions(workflows.DreamWorkflow, workflow.RegisterOptions{Name: protocol.DreamWorkflowName})
	w.RegisterWorkflowWithOptions(workflows.IdleCompactWorkflow, workflow.RegisterOptions{Name: protocol.IdleCompactWorkflowName})
	w.RegisterWorkflowWithOptions(workflows.ScheduledTurnWorkflow, workflow.RegisterOptions{Name: protocol.ScheduledTurnWorkflowName})
	w.RegisterWorkflowWithOptions(workflows.HeartbeatWorkflow, workflow.RegisterOptions{Name: protocol.HeartbeatWorkflowName})
	for name, fn := range map[string]any{
		protocol.ActivityMeasure:          acts.Measure,
		protocol.ActivityPrepareDream:     acts.PrepareDream,
		protocol.ActivityFinishDream:      acts.FinishDream,
		protocol.ActivityIdleSessions:     acts.IdleSessions,
		protocol.ActivityPublishScheduled: acts.PublishScheduled,
		protocol.ActivityDeleteSchedule:   acts.DeleteSchedule,
		protocol.ActivityHeartbeatTasks:   acts.HeartbeatTasks,
		protocol.ActivityHeartbeatTrim:    acts.HeartbeatTrim,
	} {
		w.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name})
	}
}
