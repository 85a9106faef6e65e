package workers

import (
	"slices"
	"testing"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/nanobot-durable/nanobot/activities"
	"github.com/nanobot-durable/nanobot/protocol"
)

// names records what register puts into a worker (register calls only these two).
type names struct {
	worker.Registry
	activities, workflows []string
}

func (n *names) RegisterWorkflowWithOptions(_ any, o workflow.RegisterOptions) {
	n.workflows = append(n.workflows, o.Name)
}
func (n *names) RegisterActivityWithOptions(_ any, o activity.RegisterOptions) {
	n.activities = append(n.activities, o.Name)
}

func registered(kind queueKind, holdsWorkspace bool) *names {
	var n names
	register(&n, Features(activities.New(activities.Deps{})), kind, holdsWorkspace)
	return &n
}

// TestOnlyTheWorkspaceHolderRegistersWorkspaceActivities: a turn worker on
// a host without the workspace cannot run a tool or read the prompt files,
// even when such a task reaches the turn queue; the holder serves them on
// both queues.
func TestOnlyTheWorkspaceHolderRegistersWorkspaceActivities(t *testing.T) {
	workspace := []string{protocol.ActivityBuild, protocol.ActivityTool, protocol.ActivityPrepareDream,
		protocol.ActivityFinishDream, protocol.ActivityHeartbeatTasks, protocol.ActivitySubagentBuild, protocol.ActivityEndExecSessions, protocol.ActivityDiskGC}
	stateless := registered(turnQueue, false)
	holder := registered(turnQueue, true)
	onWorkspace := registered(workspaceQueue, true)
	for _, name := range workspace {
		if slices.Contains(stateless.activities, name) {
			t.Errorf("a worker without the workspace registers %s", name)
		}
		if !slices.Contains(holder.activities, name) || !slices.Contains(onWorkspace.activities, name) {
			t.Errorf("the workspace holder does not serve %s on both queues", name)
		}
	}
	if !slices.Contains(stateless.activities, protocol.ActivityBuildHere) || !slices.Contains(holder.activities, protocol.ActivityBuildHere) {
		t.Error("a turn worker does not register BUILD tried in place (the holder runs it, others answer NotHere)")
	}
	if slices.Contains(onWorkspace.activities, protocol.ActivityBuildHere) {
		t.Error("the workspace queue serves BUILD tried in place, a local activity")
	}
	if !slices.Contains(onWorkspace.activities, protocol.ActivityCommand) {
		t.Error("the workspace queue does not answer slash commands")
	}
	if len(onWorkspace.activities) != len(workspace)+1 || len(onWorkspace.workflows) != 0 {
		t.Errorf("the workspace queue serves %v and workflows %v; want only %v", onWorkspace.activities, onWorkspace.workflows, workspace)
	}
	for _, name := range []string{protocol.ActivityRestore, protocol.ActivityCommand, protocol.ActivitySave, protocol.ActivityToolResult} {
		if !slices.Contains(stateless.activities, name) {
			t.Errorf("a stateless turn worker lacks %s", name)
		}
	}
	if !slices.Contains(stateless.workflows, protocol.TurnWorkflowName) {
		t.Error("a stateless turn worker does not run turns")
	}
	if llm := registered(llmQueue, false); !slices.Contains(llm.activities, protocol.ActivityLLMCall) {
		t.Errorf("the model queue serves %v", llm.activities)
	}
}
