package inspect

import (
	"testing"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"

	"github.com/nanobot-durable/nanobot/protocol"
)

// TestSpawnCallsAreToolsOfTheirModelCall: a spawn call starts a child
// workflow, not a tool activity; it is listed under the model call that made it.
func TestSpawnCallsAreToolsOfTheirModelCall(t *testing.T) {
	payloads := func(v any) *commonpb.Payloads {
		p, err := converter.GetDefaultDataConverter().ToPayloads(v)
		require.NoError(t, err)
		return p
	}
	ev := func(id int64, typ enumspb.EventType, attrs any) *historypb.HistoryEvent {
		e := &historypb.HistoryEvent{EventId: id, EventType: typ}
		switch a := attrs.(type) {
		case *historypb.WorkflowExecutionStartedEventAttributes:
			e.Attributes = &historypb.HistoryEvent_WorkflowExecutionStartedEventAttributes{WorkflowExecutionStartedEventAttributes: a}
		case *historypb.ActivityTaskScheduledEventAttributes:
			e.Attributes = &historypb.HistoryEvent_ActivityTaskScheduledEventAttributes{ActivityTaskScheduledEventAttributes: a}
		case *historypb.ActivityTaskCompletedEventAttributes:
			e.Attributes = &historypb.HistoryEvent_ActivityTaskCompletedEventAttributes{ActivityTaskCompletedEventAttributes: a}
		case *historypb.StartChildWorkflowExecutionInitiatedEventAttributes:
			e.Attributes = &historypb.HistoryEvent_StartChildWorkflowExecutionInitiatedEventAttributes{StartChildWorkflowExecutionInitiatedEventAttributes: a}
		}
		return e
	}
	llm := func(n int) *historypb.ActivityTaskScheduledEventAttributes {
		return &historypb.ActivityTaskScheduledEventAttributes{ActivityType: &commonpb.ActivityType{Name: protocol.ActivityLLMCall},
			Input: payloads(protocol.LLMCallInput{Iteration: n, Call: n})}
	}
	child := &historypb.StartChildWorkflowExecutionInitiatedEventAttributes{WorkflowType: &commonpb.WorkflowType{Name: protocol.SubagentWorkflowName},
		Input: payloads(protocol.SubagentInput{ID: "0a1b2c3d", Label: "files", Spawn: protocol.SpawnRef{CallID: "sp1"}})}
	events := []*historypb.HistoryEvent{
		ev(1, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED, &historypb.WorkflowExecutionStartedEventAttributes{OriginalExecutionRunId: "run-1", Input: payloads(protocol.TurnInput{})}),
		ev(5, enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED, llm(1)),
		ev(7, enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED, &historypb.ActivityTaskCompletedEventAttributes{ScheduledEventId: 5,
			Result: payloads(protocol.LLMCallResult{ToolCalls: []protocol.ToolCallRef{{ID: "sp1", Name: "spawn", ArgsPreview: `{"task":"count"}`}}})}),
		ev(9, enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED, llm(2)), // the next model call is asked while the subagent starts
		ev(10, enumspb.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED, child),
		ev(11, enumspb.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED, &historypb.StartChildWorkflowExecutionInitiatedEventAttributes{
			WorkflowType: &commonpb.WorkflowType{Name: "SomethingElse"}}),
	}
	turn, err := FromHistory("turn/web:x", events)
	require.NoError(t, err)
	require.Len(t, turn.Iterations, 2)
	require.Equal(t, []Tool{{ID: "sp1", Name: "spawn", Args: `{"task":"count"}`, Outcome: "ok"}}, turn.Iterations[0].Tools, "under the model call that made it")
	require.Empty(t, turn.Iterations[1].Tools, "another child workflow is no tool call")
}
