package workflows

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"

	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
)

// TestAnInstancesTurnKeepsToItsOwnQueues: a turn started on an instance's
// queue schedules its model calls, tools and replies on that instance's
// queues only, so a second nanobot on the namespace never takes them.
func TestAnInstancesTurnKeepsToItsOwnQueues(t *testing.T) {
	inst := protocol.Instance("work")
	env := newEnv(t)
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{TaskQueue: inst.TaskQueue()})
	msg := inbound("m1", "hi")
	msg.SessionKey, msg.Route = "telegram:7", protocol.Route{Channel: "telegram", ChatID: "7"} // the channel's shared delivery queue
	sendAtStart(env, msg)
	var mu sync.Mutex
	queues := map[string]string{}
	seen := func(ctx context.Context, name string) {
		mu.Lock()
		defer mu.Unlock()
		queues[name] = activity.GetInfo(ctx).TaskQueue
	}
	model := &script{replies: []protocol.LLMCallResult{toolCall("c1"), text("done")}}
	model.install(env)
	env.OnActivity(protocol.ActivityTool, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, _ protocol.ToolCallInput) (protocol.ToolCallResult, error) {
			seen(ctx, protocol.ActivityTool)
			return protocol.ToolCallResult{Preview: "ok"}, nil
		})
	env.OnActivity(protocol.ActivityDeliver, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, _ protocol.DeliverInput) error {
			seen(ctx, protocol.ActivityDeliver)
			return nil
		})
	env.ExecuteWorkflow(protocol.TurnWorkflowName, protocol.TurnInput{SessionKey: "telegram:7", Settings: testenv.Settings(protocol.Settings{})})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	require.Equal(t, []string{"work.nanobot", "work.nanobot"}, model.queues, "model calls on the turn's own queue while a slot is free")
	require.Equal(t, map[string]string{
		protocol.ActivityTool:    "work.nanobot",
		protocol.ActivityDeliver: "work.nanobot-channel-telegram",
	}, queues)
}

// TestSharedStateTurnsRunTheWorkspaceOnItsHost: with a workspace queue in
// the settings (state in PostgreSQL), BUILD and the tools run there, not on
// the turn's worker, which may be on a host without the workspace.
func TestSharedStateTurnsRunTheWorkspaceOnItsHost(t *testing.T) {
	env := newEnv(t)
	sendAtStart(env, inbound("m1", "hi"))
	var mu sync.Mutex
	queues := map[string]string{}
	seen := func(ctx context.Context, name string) {
		mu.Lock()
		defer mu.Unlock()
		queues[name] = activity.GetInfo(ctx).TaskQueue
	}
	(&script{replies: []protocol.LLMCallResult{toolCall("c1"), text("done")}}).install(env)
	env.OnActivity(protocol.ActivityBuild, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, _ protocol.StepInput) (protocol.BuildResult, error) {
			seen(ctx, protocol.ActivityBuild)
			return protocol.BuildResult{}, nil
		})
	env.OnActivity(protocol.ActivityTool, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, _ protocol.ToolCallInput) (protocol.ToolCallResult, error) {
			seen(ctx, protocol.ActivityTool)
			return protocol.ToolCallResult{Preview: "ok"}, nil
		})
	settings := testenv.Settings(protocol.Settings{WorkspaceQueue: protocol.WorkspaceTaskQueue})
	env.ExecuteWorkflow(protocol.TurnWorkflowName, protocol.TurnInput{SessionKey: "cli:direct", Settings: settings})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	require.Equal(t, map[string]string{protocol.ActivityBuild: protocol.WorkspaceTaskQueue, protocol.ActivityTool: protocol.WorkspaceTaskQueue}, queues)
}

// TestWorkspaceHostBuildsItsOwnTurnsInPlace: with a workspace queue in the settings, a turn whose
// worker holds the workspace builds there (BuildHere, a local activity): no BUILD activity task
// goes through the workspace queue. The tools still go there.
func TestWorkspaceHostBuildsItsOwnTurnsInPlace(t *testing.T) {
	env := newEnv(t)
	sendAtStart(env, inbound("m1", "hi"))
	(&script{replies: []protocol.LLMCallResult{text("done")}}).install(env)
	builtHere := 0
	env.OnActivity(protocol.ActivityBuildHere, mock.Anything, mock.Anything).Return(
		func(context.Context, protocol.StepInput) (protocol.BuildResult, error) {
			builtHere++
			return protocol.BuildResult{}, nil
		})
	env.OnActivity(protocol.ActivityBuild, mock.Anything, mock.Anything).Return(
		func(context.Context, protocol.StepInput) (protocol.BuildResult, error) {
			t.Error("BUILD went through the workspace queue though the turn's worker holds the workspace")
			return protocol.BuildResult{}, nil
		})
	settings := testenv.Settings(protocol.Settings{WorkspaceQueue: protocol.WorkspaceTaskQueue})
	env.ExecuteWorkflow(protocol.TurnWorkflowName, protocol.TurnInput{SessionKey: "cli:direct", Settings: settings})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	require.Equal(t, 1, builtHere)
}
