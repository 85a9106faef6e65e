package workflows

import (
	"context"
	"testing"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/protocol"
)

func sameCall(id string) protocol.LLMCallResult {
	return protocol.LLMCallResult{FinishReason: "tool_calls", ToolCalls: []protocol.ToolCallRef{{ID: id, Name: "web_search", Signature: "web_search:same"}}}
}

// runRepeats runs a turn whose model repeats one call; it returns the calls
// that ran, the results the workflow gave instead, and the turn's end.
func runRepeats(t *testing.T, s *script, limit int) (ran []string, refused []protocol.ToolResultInput, delivered []protocol.DeliverInput) {
	t.Helper()
	env := newEnv(t)
	sendAtStart(env, inbound("m1", "search it"))
	s.install(env)
	env.OnActivity(protocol.ActivityTool, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in protocol.ToolCallInput) (protocol.ToolCallResult, error) {
			ran = append(ran, in.CallID)
			return protocol.ToolCallResult{Preview: "results"}, nil
		})
	env.OnActivity(protocol.ActivityToolResult, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in protocol.ToolResultInput) (protocol.ToolCallResult, error) {
			refused = append(refused, in)
			return protocol.ToolCallResult{Preview: in.Text, IsError: true}, nil
		})
	env.OnActivity(protocol.ActivityDeliver, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in protocol.DeliverInput) error { delivered = append(delivered, in); return nil })
	env.ExecuteWorkflow(protocol.TurnWorkflowName, protocol.TurnInput{SessionKey: "cli:direct", Settings: protocol.Settings{
		Model: "m", MaxIterations: 20, MaxRepeatedToolCalls: limit, LLMTimeout: 60e9, LLMHeartbeat: 10e9, ToolTimeout: 60e9, LLMMaxAttempts: 1,
	}})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	return ran, refused, delivered
}

func TestRepeatedCallIsGuidedThenTheTurnEnds(t *testing.T) {
	s := &script{replies: []protocol.LLMCallResult{
		sameCall("c1"), sameCall("c2"), sameCall("c3"), sameCall("c4"), sameCall("c5"), text("Here is what I found."),
	}}
	ran, refused, delivered := runRepeats(t, s, 3)
	require.Equal(t, []string{"c1", "c2", "c3"}, ran, "three runs, then no more")
	require.Len(t, refused, 2)
	require.Contains(t, refused[0].Text, "already ran 3 times in this turn")
	require.Equal(t, "c4", refused[0].CallID)
	require.Equal(t, []string{"", "", "", "", "", protocol.ModeRepeated}, s.modes(), "the second strike ends the tools")
	require.Equal(t, protocol.StopRepeatedCalls, delivered[len(delivered)-1].StopReason)
}

func TestOtherArgumentsAreNotRepeats(t *testing.T) {
	var replies []protocol.LLMCallResult
	for _, sig := range []string{"a", "b", "c", "d", "e"} {
		r := sameCall("c-" + sig)
		r.ToolCalls[0].Signature = "web_search:" + sig
		replies = append(replies, r)
	}
	s := &script{replies: append(replies, text("done"))}
	ran, refused, _ := runRepeats(t, s, 1)
	require.Len(t, ran, 5)
	require.Empty(t, refused)
}
