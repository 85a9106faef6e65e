package workflows

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
)

// A tool call whose activity fails for good (its journal entry is gone, a
// worker cannot run it) is an error result for the model; the turn goes on.
func TestToolFailureBecomesTheModelsResult(t *testing.T) {
	env := newEnv(t)
	sendAtStart(env, inbound("m1", "read it"))
	s := &script{replies: []protocol.LLMCallResult{toolCall("a"), text("it could not be read")}}
	s.install(env)
	env.OnActivity(protocol.ActivityTool, mock.Anything, mock.Anything).Return(
		protocol.ToolCallResult{}, temporal.NewNonRetryableApplicationError("count running subagents: invalid query", "Boom", nil))
	var journaled protocol.ToolResultInput
	env.OnActivity(protocol.ActivityToolResult, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in protocol.ToolResultInput) (protocol.ToolCallResult, error) {
			journaled = in
			return protocol.ToolCallResult{Preview: in.Text, IsError: true}, nil
		}).Once()
	var delivered protocol.DeliverInput
	env.OnActivity(protocol.ActivityDeliver, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in protocol.DeliverInput) error { delivered = in; return nil })
	env.ExecuteWorkflow(protocol.TurnWorkflowName, protocol.TurnInput{SessionKey: "cli:direct", Settings: testenv.Settings(protocol.Settings{})})
	require.NoError(t, env.GetWorkflowError())
	require.Equal(t, "a", journaled.CallID)
	require.True(t, journaled.IsError)
	require.Equal(t, "Error: the read_file call could not finish: count running subagents: invalid query. "+
		"If it changes things, check whether it did before you try again.", journaled.Text)
	require.Len(t, s.calls, 2, "the model was asked again with the failure as the call's result")
	require.Equal(t, "llm-2", delivered.EntryID)
	require.Equal(t, protocol.StopCompleted, delivered.StopReason)
}

// A turn that fails for good (here BUILD) answers its chat with one short
// reply and journals the failure; the run still ends as failed.
func TestFailedTurnAnswersItsChat(t *testing.T) {
	env := newEnv(t)
	sendAtStart(env, inbound("m1", "hello"))
	env.OnActivity(protocol.ActivityBuild, mock.Anything, mock.Anything).Return(
		protocol.BuildResult{}, temporal.NewNonRetryableApplicationError("build system prompt: read AGENTS.md: is a directory", "Broken", nil))
	var saved []protocol.SaveInput
	env.OnActivity(protocol.ActivitySave, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in protocol.SaveInput) error { saved = append(saved, in); return nil })
	var delivered []protocol.DeliverInput
	env.OnActivity(protocol.ActivityDeliver, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in protocol.DeliverInput) error { delivered = append(delivered, in); return nil })
	env.OnActivity(protocol.ActivityLLMCall, mock.Anything, mock.Anything).Return(protocol.LLMCallResult{}, nil).Maybe() // for AssertNotCalled

	env.ExecuteWorkflow(protocol.TurnWorkflowName, protocol.TurnInput{SessionKey: "cli:direct", Settings: testenv.Settings(protocol.Settings{})})
	require.Error(t, env.GetWorkflowError(), "the run fails, visibly, in the Web UI")
	require.Contains(t, env.GetWorkflowError().Error(), "is a directory")
	want := "Sorry, this turn failed: build system prompt: read AGENTS.md: is a directory. Nothing was lost; /history shows what was saved."
	require.Len(t, delivered, 1)
	require.Equal(t, want, delivered[0].Text)
	require.Equal(t, []string{"m1"}, delivered[0].MessageIDs)
	require.Equal(t, protocol.StopFailed, delivered[0].StopReason)
	require.Len(t, saved, 1)
	require.Equal(t, protocol.StopFailed, saved[0].StopReason)
	require.Equal(t, want, saved[0].Reply)
	require.Equal(t, "hello", saved[0].Message.Content, "the message is journaled with the failure")
	env.AssertNotCalled(t, protocol.ActivityLLMCall, mock.Anything, mock.Anything)
}

// Messages that arrived before the failure are not lost: they start the next turn.
func TestFailedTurnCarriesWaitingMessages(t *testing.T) {
	env := newEnv(t)
	sendAtStart(env, inbound("m1", "hello"), inbound("m2", "are you there?"))
	env.OnActivity(protocol.ActivityBuild, mock.Anything, mock.Anything).Return(
		protocol.BuildResult{}, temporal.NewNonRetryableApplicationError("disk full", "Broken", nil))
	var delivered []protocol.DeliverInput
	env.OnActivity(protocol.ActivityDeliver, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in protocol.DeliverInput) error { delivered = append(delivered, in); return nil })
	env.ExecuteWorkflow(protocol.TurnWorkflowName, protocol.TurnInput{SessionKey: "cli:direct", Settings: testenv.Settings(protocol.Settings{})})
	err := env.GetWorkflowError()
	require.Error(t, err)
	require.True(t, strings.Contains(err.Error(), "continue as new"), err.Error())
	require.Len(t, delivered, 1)
	require.Equal(t, []string{"m1"}, delivered[0].MessageIDs)
}
