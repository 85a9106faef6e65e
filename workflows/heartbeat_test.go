package workflows

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
)

// heartbeatRun is what one heartbeat run did with its mocked steps.
type heartbeatRun struct {
	res       protocol.HeartbeatResult
	turns     []protocol.TurnInput
	decisions []protocol.HeartbeatDecideInput
	delivered []protocol.DeliverInput
	trims     []protocol.HeartbeatTrimInput
}

// runHeartbeat runs the workflow with HEARTBEAT.md's tasks, a turn that
// stops with stop, and a decision (or its error).
func runHeartbeat(t *testing.T, tasks, stop string, decision protocol.HeartbeatDecision, decideErr error) heartbeatRun {
	env := newEnv(t)
	env.RegisterWorkflowWithOptions(HeartbeatWorkflow, workflow.RegisterOptions{Name: protocol.HeartbeatWorkflowName})
	var run heartbeatRun
	for name, fn := range map[string]any{
		protocol.ActivityHeartbeatTasks: func(context.Context, protocol.HeartbeatInput) (protocol.HeartbeatTasks, error) {
			return protocol.HeartbeatTasks{Tasks: tasks, Chars: len(tasks), KeepRecentMessages: 8,
				Settings: testenv.Settings(protocol.Settings{Model: "m", Stream: true})}, nil
		},
		protocol.ActivityHeartbeatDecide: func(_ context.Context, in protocol.HeartbeatDecideInput) (protocol.HeartbeatDecision, error) {
			run.decisions = append(run.decisions, in)
			return decision, decideErr
		},
		protocol.ActivityHeartbeatTrim: func(_ context.Context, in protocol.HeartbeatTrimInput) (int, error) {
			run.trims = append(run.trims, in)
			return in.Keep, nil
		},
	} {
		env.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name})
	}
	env.OnWorkflow(protocol.TurnWorkflowName, mock.Anything, mock.Anything).Return(
		func(_ workflow.Context, in protocol.TurnInput) (*protocol.TurnResult, error) {
			run.turns = append(run.turns, in)
			return &protocol.TurnResult{SessionKey: in.SessionKey, StopReason: stop, ReplyPreview: "The build is red."}, nil
		})
	env.OnActivity(protocol.ActivityDeliver, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in protocol.DeliverInput) error {
			run.delivered = append(run.delivered, in)
			return nil
		})
	env.ExecuteWorkflow(protocol.HeartbeatWorkflowName, protocol.HeartbeatInput{})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	require.NoError(t, env.GetWorkflowResult(&run.res))
	return run
}

var telegramChat = &protocol.Route{Channel: "telegram", ChatID: "42"}

func TestHeartbeatWithoutActiveTasksRunsNothing(t *testing.T) {
	run := runHeartbeat(t, "", protocol.StopCompleted, protocol.HeartbeatDecision{Notify: true, Route: telegramChat}, nil)
	require.False(t, run.res.Ran)
	require.Empty(t, run.turns, "no turn, so no model call")
	require.Empty(t, run.decisions)
	require.Empty(t, run.delivered)
	require.Empty(t, run.trims, "nothing ran, nothing to trim")
}

func TestHeartbeatNotifiesTheChatTheDecisionNames(t *testing.T) {
	d := protocol.HeartbeatDecision{Notify: true, Reason: "the build broke", Route: telegramChat, EntryID: "llm-1", Text: "The build is red."}
	run := runHeartbeat(t, "- check the build", protocol.StopCompleted, d, nil)
	require.Len(t, run.turns, 1)
	turn := run.turns[0]
	require.Equal(t, protocol.HeartbeatSessionKey, turn.SessionKey)
	require.False(t, turn.Settings.Stream, "nobody watches a heartbeat turn")
	require.Len(t, turn.Carry, 1)
	require.Equal(t, protocol.HeartbeatTurn, turn.Carry[0].Kind, "the kind that drops the message tool")
	require.Contains(t, turn.Carry[0].Content, "- check the build")
	require.False(t, turn.Carry[0].Route.Deliverable(), "the turn itself tells nobody")

	require.Len(t, run.decisions, 1)
	require.Equal(t, "- check the build", run.decisions[0].Tasks)
	require.NotEmpty(t, run.decisions[0].Turn, "the decision reads that turn's reply")
	require.Len(t, run.delivered, 1)
	out := run.delivered[0]
	require.Equal(t, *telegramChat, out.Route)
	require.Equal(t, protocol.HeartbeatSessionKey, out.SessionKey)
	require.Equal(t, run.decisions[0].Turn, out.Turn)
	require.Equal(t, "llm-1", out.EntryID)
	require.Equal(t, []protocol.HeartbeatTrimInput{{SessionKey: protocol.HeartbeatSessionKey, Keep: 8}}, run.trims)
	require.True(t, run.res.Ran)
	require.True(t, run.res.Notified)
	require.Equal(t, "the build broke", run.res.Reason)
	require.Equal(t, 8, run.res.Kept)
}

func TestHeartbeatStaysSilentUnlessTheDecisionSaysNotify(t *testing.T) {
	cases := map[string]struct {
		stop     string
		decision protocol.HeartbeatDecision
		err      error
		reason   string
		decided  int
	}{
		"decision false": {protocol.StopCompleted, protocol.HeartbeatDecision{Reason: "routine", Route: telegramChat}, nil, "routine", 1},
		"decision failed": {protocol.StopCompleted, protocol.HeartbeatDecision{}, temporal.NewNonRetryableApplicationError("401", protocol.ErrProviderNonRetryable, errors.New("401")),
			"the decision failed", 1},
		"no chat":      {protocol.StopCompleted, protocol.HeartbeatDecision{Notify: true, Reason: "no chat"}, nil, "no chat", 1},
		"turn stopped": {protocol.StopMaxIterations, protocol.HeartbeatDecision{Notify: true, Route: telegramChat}, nil, "the heartbeat turn stopped", 0},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			run := runHeartbeat(t, "- check the build", c.stop, c.decision, c.err)
			require.True(t, run.res.Ran)
			require.False(t, run.res.Notified)
			require.Contains(t, run.res.Reason, c.reason)
			require.Len(t, run.decisions, c.decided)
			require.Empty(t, run.delivered)
			require.Len(t, run.trims, 1, "the session is trimmed whatever was decided")
		})
	}
}
