package workflows

import (
	"context"
	"testing"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
)

func upkeepEnv(t *testing.T) *testsuite.TestWorkflowEnvironment {
	env := newEnv(t)
	env.RegisterWorkflowWithOptions(DreamWorkflow, workflow.RegisterOptions{Name: protocol.DreamWorkflowName})
	env.RegisterWorkflowWithOptions(IdleCompactWorkflow, workflow.RegisterOptions{Name: protocol.IdleCompactWorkflowName})
	for name, fn := range map[string]any{
		protocol.ActivityPrepareDream: func(context.Context, protocol.DreamInput) (protocol.DreamPlan, error) {
			return protocol.DreamPlan{}, nil
		},
		protocol.ActivityFinishDream: func(context.Context, protocol.FinishDreamInput) (protocol.DreamResult, error) {
			return protocol.DreamResult{}, nil
		},
		protocol.ActivityIdleSessions: func(context.Context, protocol.IdleCompactInput) (protocol.IdleSessions, error) {
			return protocol.IdleSessions{}, nil
		},
	} {
		env.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name})
	}
	return env
}

func dreamRun(t *testing.T, stop string, route *protocol.Route) (protocol.FinishDreamInput, protocol.TurnInput, []protocol.DeliverInput) {
	env := upkeepEnv(t)
	plan := protocol.DreamPlan{SessionKey: "dream:20260101-030000", From: 40, To: 60, Entries: 20,
		Settings: testenv.Settings(protocol.Settings{Model: "dream-model"})}
	env.OnActivity(protocol.ActivityPrepareDream, mock.Anything, mock.Anything).Return(plan, nil)
	var child protocol.TurnInput
	env.OnWorkflow(protocol.TurnWorkflowName, mock.Anything, mock.Anything).Return(
		func(_ workflow.Context, in protocol.TurnInput) (*protocol.TurnResult, error) {
			child = in
			return &protocol.TurnResult{StopReason: stop, ReplyPreview: "Updated MEMORY.md."}, nil
		})
	var fin protocol.FinishDreamInput
	env.OnActivity(protocol.ActivityFinishDream, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in protocol.FinishDreamInput) (protocol.DreamResult, error) {
			fin = in
			return protocol.DreamResult{Entries: 20, Text: "Dream read 20 history entries."}, nil
		})
	var delivered []protocol.DeliverInput
	env.OnActivity(protocol.ActivityDeliver, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in protocol.DeliverInput) error { delivered = append(delivered, in); return nil })
	env.ExecuteWorkflow(protocol.DreamWorkflowName, protocol.DreamInput{Route: route})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	return fin, child, delivered
}

func TestDreamMovesTheCursorOnlyWhenItsTurnCompletes(t *testing.T) {
	fin, child, delivered := dreamRun(t, protocol.StopCompleted, nil)
	require.True(t, fin.Completed)
	require.Equal(t, 60, fin.Plan.To)
	require.Equal(t, "dream:20260101-030000", child.SessionKey)
	require.Equal(t, dreamMaxIterations, child.Settings.MaxIterations)
	require.Equal(t, "dream-model", child.Settings.Model, "the model PrepareDream read from the config when it fired")
	require.Equal(t, protocol.DreamTurn, child.Carry[0].Kind)
	require.Equal(t, "40", child.Carry[0].Metadata["dream_from"], "entries after the cursor")
	require.Equal(t, "60", child.Carry[0].Metadata["dream_to"])
	require.Empty(t, delivered, "a scheduled Dream tells nobody")

	fin, _, _ = dreamRun(t, protocol.StopMaxIterations, nil)
	require.False(t, fin.Completed, "a Dream that ran out of iterations keeps the cursor")
}

func TestDreamAskedInAChatAnswersThere(t *testing.T) {
	tg := &protocol.Route{Channel: "telegram", ChatID: "42"}
	_, _, delivered := dreamRun(t, protocol.StopCompleted, tg)
	require.Len(t, delivered, 1)
	require.Equal(t, *tg, delivered[0].Route)
	require.Equal(t, "Dream read 20 history entries.", delivered[0].Text)
}

func TestIdleCompactionCompactsWhatIdleSessionsFound(t *testing.T) {
	env := upkeepEnv(t)
	env.OnActivity(protocol.ActivityIdleSessions, mock.Anything, mock.Anything).Return(
		protocol.IdleSessions{Sessions: []string{"cli:a", "telegram:1"}, Skipped: []string{"cli:busy"}, Settings: testenv.Settings(protocol.Settings{Model: "now"})}, nil)
	var keys []string
	env.OnActivity(protocol.ActivityConsolidate, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in protocol.ConsolidateInput) (protocol.ConsolidateResult, error) {
			require.Equal(t, protocol.ConsolidateIdle, in.Reason)
			require.Equal(t, "now", in.Settings.Model, "the settings IdleSessions read when the schedule fired")
			keys = append(keys, in.SessionKey)
			return protocol.ConsolidateResult{Archived: 6}, nil
		})
	env.ExecuteWorkflow(protocol.IdleCompactWorkflowName, protocol.IdleCompactInput{})
	require.NoError(t, env.GetWorkflowError())
	var res protocol.IdleCompactResult
	require.NoError(t, env.GetWorkflowResult(&res))
	require.Equal(t, []string{"cli:a", "telegram:1"}, keys)
	require.Equal(t, []string{"cli:a", "telegram:1"}, res.Compacted)
	require.Equal(t, []string{"cli:busy"}, res.Skipped)
}
