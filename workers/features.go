package workers

import (
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/nanobot-durable/nanobot/activities"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/workflows"
)

// Entry is one workflow or activity: its registered name, its function and
// the task queue it is polled on. DeliveryQueue stands for every delivery
// queue the process serves (a channel's shared queue, or its own).
type Entry struct {
	Name     string
	Func     any
	Queue    string
	Workflow bool
	// Workspace: the activity reads or writes the workspace. Only a process
	// holding it registers it, on the turn queue and the workspace queue.
	Workspace bool
	// Elsewhere, for a workspace step tried as a local activity on the turn's worker, is what a
	// process without the workspace registers under the same name (an ErrNotHere answer): every turn
	// worker registers the step, and only the turn queue has it.
	Elsewhere any
}

// DeliveryQueue marks the entries registered on each delivery queue.
const DeliveryQueue = "<delivery>"

// Feature is one capability's workflows and activities, read in one table.
type Feature struct {
	Name    string
	Entries []Entry
}

func wf(name string, fn any) Entry {
	return Entry{Name: name, Func: fn, Queue: protocol.TaskQueue, Workflow: true}
}

func act(name string, fn any, queue string) Entry { return Entry{Name: name, Func: fn, Queue: queue} }

// ws is an activity of the workspace host.
func ws(name string, fn any) Entry {
	return Entry{Name: name, Func: fn, Queue: protocol.TaskQueue, Workspace: true}
}

// here is a workspace step every turn worker runs as a local activity: fn on the workspace
// host, elsewhere on any other.
func here(name string, fn, elsewhere any) Entry {
	return Entry{Name: name, Func: fn, Queue: protocol.TaskQueue, Workspace: true, Elsewhere: elsewhere}
}

// Features are every workflow and activity of nanobot, feature by feature.
// Local activities (the turn's states) run on the turn's own queue.
func Features(a *activities.Set) []Feature {
	turns, llm := protocol.TaskQueue, protocol.LLMTaskQueue
	return []Feature{
		{"turn", []Entry{
			wf(protocol.TurnWorkflowName, workflows.TurnWorkflow),
			act(protocol.ActivityRestore, a.Turn.Restore, turns),
			act(protocol.ActivityCompact, a.Turn.Compact, turns),
			act(protocol.ActivityCommand, a.Commands.Command, turns),                       // a local activity for every message
			act(protocol.ActivityCommand, a.Commands.Command, protocol.WorkspaceTaskQueue), // a slash command, where the workspace is
			ws(protocol.ActivityBuild, a.Turn.Build),
			here(protocol.ActivityBuildHere, a.Turn.BuildHere, a.Turn.BuildElsewhere),
			act(protocol.ActivitySave, a.Turn.Save, turns),
			act(protocol.ActivityInject, a.Turn.Inject, turns),
		}},
		// On the turn's queue while a model-call slot is free (dispatched with the
		// workflow task), on the LLM queue after that queue's Busy.
		{"model call", []Entry{
			act(protocol.ActivityLLMCall, a.Model.LLMCallNow, turns),
			act(protocol.ActivityLLMCall, a.Model.LLMCall, llm),
		}},
		{"voice notes", []Entry{act(protocol.ActivityTranscribe, a.Transcriber.Transcribe, llm)}},
		{"tool call", []Entry{
			ws(protocol.ActivityTool, a.Tools.ToolCall),
			act(protocol.ActivityToolResult, a.Tools.ToolResult, turns),
			ws(protocol.ActivityEndExecSessions, a.Tools.EndExecSessions),
		}},
		{"approval", []Entry{
			act(protocol.ActivityApprovalAsk, a.Approvals.ApprovalAsk, turns),
			act(protocol.ActivityApprovalClose, a.Approvals.ApprovalClose, turns),
			act(protocol.ActivityApprovalVerify, a.Approvals.ApprovalVerify, turns),
		}},
		{"delivery", []Entry{
			wf(protocol.MessageWorkflowName, workflows.MessageWorkflow),
			act(protocol.ActivityDeliver, a.Delivery.Deliver, DeliveryQueue),
			act(protocol.ActivityMarkUndelivered, a.Delivery.MarkUndelivered, turns),
		}},
		{"memory", []Entry{
			wf(protocol.IdleCompactWorkflowName, workflows.IdleCompactWorkflow),
			act(protocol.ActivityConsolidate, a.Memory.Consolidate, llm),
			act(protocol.ActivityMeasure, a.Memory.Measure, turns),
			act(protocol.ActivityIdleSessions, a.Memory.IdleSessions, turns),
		}},
		{"dream", []Entry{
			wf(protocol.DreamWorkflowName, workflows.DreamWorkflow),
			ws(protocol.ActivityPrepareDream, a.Dream.PrepareDream),
			ws(protocol.ActivityFinishDream, a.Dream.FinishDream),
		}},
		{"heartbeat", []Entry{
			wf(protocol.HeartbeatWorkflowName, workflows.HeartbeatWorkflow),
			ws(protocol.ActivityHeartbeatTasks, a.Heartbeat.HeartbeatTasks),
			act(protocol.ActivityHeartbeatDecide, a.Heartbeat.HeartbeatDecide, llm),
			act(protocol.ActivityHeartbeatTrim, a.Heartbeat.HeartbeatTrim, turns),
		}},
		{"disk", []Entry{
			wf(protocol.DiskGCWorkflowName, workflows.DiskGCWorkflow),
			ws(protocol.ActivityDiskGC, a.Upkeep.DiskGC),
		}},
		{"cron", []Entry{
			wf(protocol.ScheduledTurnWorkflowName, workflows.ScheduledTurnWorkflow),
			act(protocol.ActivityPublishScheduled, a.Cron.PublishScheduled, turns),
			act(protocol.ActivityDeleteSchedule, a.Cron.DeleteSchedule, turns),
		}},
		{"subagent", []Entry{
			wf(protocol.SubagentWorkflowName, workflows.SubagentWorkflow),
			act(protocol.ActivityPrepareSpawn, a.Subagents.PrepareSpawn, turns),
			ws(protocol.ActivitySubagentBuild, a.Subagents.SubagentBuild),
			act(protocol.ActivityAnnounce, a.Subagents.Announce, turns),
		}},
		{"session messages", []Entry{
			wf(protocol.SessionReplyWaitWorkflowName, workflows.SessionReplyWaitWorkflow),
			act(protocol.ActivitySessionReplyTimeout, a.Sessions.SessionReplyTimeout, turns),
		}},
	}
}

// Kinds of queue a worker polls, for register.
type queueKind int

const (
	turnQueue queueKind = iota
	llmQueue
	deliveryQueue
	workspaceQueue
)

// register puts into w every entry polled on a queue of this kind: the
// turn's own entries (workspace ones only when this process holds the
// workspace), the model calls, the deliveries or the workspace's. It
// returns what the worker polls for there: workflow tasks when it
// registered a workflow, else activity tasks only.
func register(w worker.Registry, features []Feature, kind queueKind, holdsWorkspace bool) enumspb.TaskQueueType {
	polls := enumspb.TASK_QUEUE_TYPE_ACTIVITY
	for _, f := range features {
		for _, e := range f.Entries {
			var on bool
			fn := e.Func
			switch kind {
			case turnQueue:
				on = e.Queue == protocol.TaskQueue && (!e.Workspace || holdsWorkspace || e.Elsewhere != nil)
				if e.Workspace && !holdsWorkspace {
					fn = e.Elsewhere
				}
			case llmQueue:
				on = e.Queue == protocol.LLMTaskQueue
			case deliveryQueue:
				on = e.Queue == DeliveryQueue
			case workspaceQueue:
				on = (e.Workspace && e.Elsewhere == nil) || e.Queue == protocol.WorkspaceTaskQueue
			}
			switch {
			case !on:
			case e.Workflow:
				w.RegisterWorkflowWithOptions(fn, workflow.RegisterOptions{Name: e.Name})
				polls = enumspb.TASK_QUEUE_TYPE_WORKFLOW
			default:
				w.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: e.Name})
			}
		}
	}
	return polls
}

// RegisterWorkflows puts every workflow into w (a replayer, a test).
func RegisterWorkflows(w worker.WorkflowRegistry, features []Feature) {
	for _, f := range features {
		for _, e := range f.Entries {
			if e.Workflow {
				w.RegisterWorkflowWithOptions(e.Func, workflow.RegisterOptions{Name: e.Name})
			}
		}
	}
}
