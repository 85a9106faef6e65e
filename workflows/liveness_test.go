package workflows

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/protocol"
)

// TestCallsCarryTheHeartbeatTimeout: with the product's settings, the model
// call, the tool call and the delivery are scheduled with the 3 s heartbeat
// timeout, so a worker that vanishes mid-call is noticed within it.
func TestCallsCarryTheHeartbeatTimeout(t *testing.T) {
	settings := config.Default().TurnSettings()
	settings.Model = "m"
	require.Equal(t, protocol.HeartbeatTimeout, settings.LLMHeartbeat, "NANOBOT_LLM_HEARTBEAT_TIMEOUT_S's default")

	env := newEnv(t)
	sendAtStart(env, inbound("m1", "list the files"))
	seen := map[string]time.Duration{}
	record := func(ctx context.Context) {
		info := activity.GetInfo(ctx)
		seen[info.ActivityType.Name] = info.HeartbeatTimeout
	}
	replies := []protocol.LLMCallResult{
		{EntryID: "llm-1", FinishReason: "tool_calls", ToolCalls: []protocol.ToolCallRef{{ID: "c1", Name: "exec", Signature: "exec:ls"}}},
		{EntryID: "llm-2", ContentPreview: "done", ContentChars: 4, FinishReason: "stop"},
	}
	env.OnActivity(protocol.ActivityLLMCall, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in protocol.LLMCallInput) (protocol.LLMCallResult, error) {
			record(ctx)
			return replies[in.Call-1], nil
		})
	env.OnActivity(protocol.ActivityTool, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in protocol.ToolCallInput) (protocol.ToolCallResult, error) {
			record(ctx)
			return protocol.ToolCallResult{Preview: "a.txt"}, nil
		})
	env.OnActivity(protocol.ActivityDeliver, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in protocol.DeliverInput) error { record(ctx); return nil })
	env.ExecuteWorkflow(protocol.TurnWorkflowName, protocol.TurnInput{SessionKey: "cli:direct", Settings: settings})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	require.Equal(t, map[string]time.Duration{
		protocol.ActivityLLMCall: protocol.HeartbeatTimeout, protocol.ActivityTool: protocol.HeartbeatTimeout,
		protocol.ActivityDeliver: protocol.HeartbeatTimeout,
	}, seen)
}
