package workflows

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
)

// runSubagent runs a subagent whose one tool call fails, and returns how
// it ended and what it announced.
func runSubagent(t *testing.T, failOnToolError bool) (*protocol.SubagentResult, *script, protocol.AnnounceInput) {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(SubagentWorkflow, workflow.RegisterOptions{Name: protocol.SubagentWorkflowName})
	env.RegisterActivityWithOptions(func(context.Context, protocol.SubagentInput) error { return nil }, activity.RegisterOptions{Name: protocol.ActivitySubagentBuild})
	env.RegisterActivityWithOptions(stubSave, activity.RegisterOptions{Name: protocol.ActivitySave})
	env.RegisterActivityWithOptions(stubLLM, activity.RegisterOptions{Name: protocol.ActivityLLMCall})
	env.RegisterActivityWithOptions(stubTool, activity.RegisterOptions{Name: protocol.ActivityTool})
	var announced protocol.AnnounceInput
	env.RegisterActivityWithOptions(func(_ context.Context, in protocol.AnnounceInput) error { announced = in; return nil },
		activity.RegisterOptions{Name: protocol.ActivityAnnounce})
	sc := &script{replies: []protocol.LLMCallResult{toolCall("a"), text("I will try another way")}}
	sc.install(env)
	env.OnActivity(protocol.ActivityTool, mock.Anything, mock.Anything).Return(protocol.ToolCallResult{Preview: "Error: File not found: notes.txt", IsError: true}, nil)
	settings := testenv.Settings(protocol.Settings{FailOnToolError: failOnToolError})
	env.ExecuteWorkflow(protocol.SubagentWorkflowName, protocol.SubagentInput{ID: "sub1", Label: "read notes", OriginKey: "cli:direct", Settings: settings})
	require.NoError(t, env.GetWorkflowError())
	var res protocol.SubagentResult
	require.NoError(t, env.GetWorkflowResult(&res))
	return &res, sc, announced
}

// TestFailOnToolErrorEndsASubagent: with agents.defaults.failOnToolError
// (nanobot's default) a subagent stops at its first tool error and reports
// it; without, the model gets the error and goes on.
func TestFailOnToolErrorEndsASubagent(t *testing.T) {
	res, sc, announced := runSubagent(t, true)
	require.Equal(t, protocol.StopToolError, res.StopReason)
	require.Equal(t, "Error: the read_file tool failed: Error: File not found: notes.txt", res.ResultPreview)
	require.Len(t, sc.calls, 1, "no model call after the failing tool")
	require.Equal(t, protocol.StopToolError, announced.StopReason)

	res, sc, _ = runSubagent(t, false)
	require.Equal(t, protocol.StopCompleted, res.StopReason)
	require.Len(t, sc.calls, 2, "the model was asked again with the error as the call's result")
}

// TestSendMaxRetriesBoundsTheDeliveryTries: channels.sendMaxRetries is how
// often a reply is tried, the first send included.
func TestSendMaxRetriesBoundsTheDeliveryTries(t *testing.T) {
	for _, tc := range []struct {
		retries int32
		want    int
	}{{2, 2}, {0, defaultDeliveryAttempts}} {
		env := newEnv(t)
		sendAtStart(env, protocol.Inbound{ID: "m1", SessionKey: "telegram:42", Route: protocol.Route{Channel: "telegram", ChatID: "42"}, Content: "hi"})
		sc := &script{replies: []protocol.LLMCallResult{text("hello")}}
		sc.install(env)
		tries := 0
		env.OnActivity(protocol.ActivityDeliver, mock.Anything, mock.Anything).Return(
			func(_ context.Context, in protocol.DeliverInput) error {
				tries++
				require.Equal(t, tc.retries, in.MaxAttempts)
				return errors.New("platform down")
			})
		env.ExecuteWorkflow(protocol.TurnWorkflowName, protocol.TurnInput{SessionKey: "telegram:42", Settings: testenv.Settings(protocol.Settings{SendMaxRetries: tc.retries})})
		require.True(t, env.IsWorkflowCompleted())
		require.Equal(t, tc.want, tries, "sendMaxRetries %d", tc.retries)
	}
}
