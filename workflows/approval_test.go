package workflows

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"

	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
)

// askedCall is an exec call the policy asks about.
func askedCall(id, command string) protocol.LLMCallResult {
	return protocol.LLMCallResult{FinishReason: "tool_calls", ToolCalls: []protocol.ToolCallRef{{
		ID: id, Name: "exec", Signature: "exec:" + command,
		Ask: &protocol.AskRef{Reason: "a risky command", Key: "exec " + command, Args: command},
	}}}
}

// approvalRun records what a turn with approval requests did.
type approvalRun struct {
	env       *testsuite.TestWorkflowEnvironment
	script    *script
	asked     []protocol.ApprovalAskInput
	closed    []protocol.ApprovalCloseInput
	ran       []protocol.ToolCallInput
	results   []protocol.ToolResultInput
	delivered []protocol.DeliverInput
}

// newApprovalRun mocks every activity an approval touches; answer, when
// set, is signalled once the request is delivered.
func newApprovalRun(t *testing.T, s *script, always bool, answer func(run *approvalRun, req protocol.ApprovalRequest)) *approvalRun {
	t.Helper()
	run := &approvalRun{env: newEnv(t), script: s}
	env := run.env
	env.RegisterActivityWithOptions(func(context.Context, protocol.ApprovalAskInput) (protocol.ApprovalAskResult, error) {
		return protocol.ApprovalAskResult{}, nil
	}, activity.RegisterOptions{Name: protocol.ActivityApprovalAsk})
	env.RegisterActivityWithOptions(func(context.Context, protocol.ApprovalCloseInput) (protocol.ApprovalAnswer, error) {
		return protocol.ApprovalAnswer{}, nil
	}, activity.RegisterOptions{Name: protocol.ActivityApprovalClose})
	sendAtStart(env, inbound("m1", "clean the build"))
	s.install(env)
	env.OnActivity(protocol.ActivityApprovalAsk, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in protocol.ApprovalAskInput) (protocol.ApprovalAskResult, error) {
			run.asked = append(run.asked, in)
			req := protocol.ApprovalRequest{ID: in.ID, Tool: in.Tool, Args: in.Args, Reason: in.Reason, Key: in.Key}
			return protocol.ApprovalAskResult{Allowed: always, Request: req}, nil
		})
	env.OnActivity(protocol.ActivityApprovalClose, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in protocol.ApprovalCloseInput) (protocol.ApprovalAnswer, error) {
			run.closed = append(run.closed, in)
			return protocol.ApprovalAnswer{ID: in.ID, Verdict: in.Verdict}, nil
		})
	env.OnActivity(protocol.ActivityTool, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in protocol.ToolCallInput) (protocol.ToolCallResult, error) {
			run.ran = append(run.ran, in)
			return protocol.ToolCallResult{Preview: "done"}, nil
		})
	env.OnActivity(protocol.ActivityToolResult, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in protocol.ToolResultInput) (protocol.ToolCallResult, error) {
			run.results = append(run.results, in)
			return protocol.ToolCallResult{Preview: in.Text, IsError: in.IsError}, nil
		})
	env.OnActivity(protocol.ActivityDeliver, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in protocol.DeliverInput) error {
			run.delivered = append(run.delivered, in)
			if in.Approval != nil && answer != nil {
				req := *in.Approval
				env.RegisterDelayedCallback(func() { answer(run, req) }, 10*time.Minute)
			}
			return nil
		})
	return run
}

func (run *approvalRun) execute(t *testing.T, settings protocol.Settings) {
	t.Helper()
	run.env.ExecuteWorkflow(protocol.TurnWorkflowName, protocol.TurnInput{SessionKey: "cli:direct", Settings: testenv.Settings(settings)})
	require.True(t, run.env.IsWorkflowCompleted())
	require.NoError(t, run.env.GetWorkflowError())
}

func TestApprovedCallRunsOnceAfterTheAnswer(t *testing.T) {
	s := &script{replies: []protocol.LLMCallResult{askedCall("c1", "rm -rf build/"), text("Cleaned.")}}
	run := newApprovalRun(t, s, false, func(run *approvalRun, req protocol.ApprovalRequest) {
		run.env.SignalWorkflow(protocol.SignalApproval, protocol.ApprovalAnswer{ID: "other", Verdict: protocol.VerdictApprove})
		run.env.SignalWorkflow(protocol.SignalApproval, protocol.ApprovalAnswer{ID: req.ID, Verdict: protocol.VerdictApprove, By: "cli:user"})
	})
	run.execute(t, protocol.Settings{})
	require.Len(t, run.asked, 1)
	require.Equal(t, "cli:direct", run.asked[0].OriginKey)
	require.Equal(t, protocol.ApprovalID("default-test-workflow-id", s.calls[0].Turn+"/c1"), run.asked[0].ID)
	require.Len(t, run.ran, 1, "the approved call ran once; the answer for another id woke nothing")
	require.True(t, run.ran[0].Approved)
	require.Empty(t, run.closed)
	var kinds []protocol.ReplyKind
	for _, d := range run.delivered {
		kinds = append(kinds, d.Kind)
	}
	require.Equal(t, []protocol.ReplyKind{protocol.ReplyApproval, protocol.ReplyAnswer}, kinds)
	require.Contains(t, run.delivered[0].Text, "/approve "+run.asked[0].ID)
	require.Equal(t, []string{"m1"}, run.delivered[1].MessageIDs, "the turn's reply still answers the message")
}

func TestDeniedCallIsTheModelsResult(t *testing.T) {
	s := &script{replies: []protocol.LLMCallResult{askedCall("c1", "git push --force"), text("OK, I won't.")}}
	run := newApprovalRun(t, s, false, func(run *approvalRun, req protocol.ApprovalRequest) {
		run.env.SignalWorkflow(protocol.SignalApproval, protocol.ApprovalAnswer{ID: req.ID, Verdict: protocol.VerdictDeny, Reason: "not on main"})
	})
	run.execute(t, protocol.Settings{})
	require.Empty(t, run.ran, "a denied call never starts")
	require.Len(t, run.results, 1)
	require.Equal(t, "The user denied this: not on main. Do not run it again; find another way or ask the user.", run.results[0].Text)
	require.True(t, run.results[0].IsError)
	require.Len(t, s.calls, 2, "the turn went on to the model")
}

func TestUnansweredRequestTimesOutOnItsTimer(t *testing.T) {
	s := &script{replies: []protocol.LLMCallResult{askedCall("c1", "sudo reboot"), text("Skipped it.")}}
	run := newApprovalRun(t, s, false, nil)
	run.execute(t, protocol.Settings{ApprovalTimeout: 3 * time.Hour})
	require.Empty(t, run.ran)
	require.Len(t, run.closed, 1)
	require.Equal(t, protocol.VerdictTimeout, run.closed[0].Verdict)
	require.Equal(t, "Nobody approved this call within 3h0m0s, so it was not run. Go on without it, or ask the user.", run.results[0].Text)
}

func TestAlwaysCoversTheKeyForTheRestOfTheTurn(t *testing.T) {
	s := &script{replies: []protocol.LLMCallResult{askedCall("c1", "rm -rf a"), askedCall("c2", "rm -rf a"), text("Done.")}}
	asks := 0
	run := newApprovalRun(t, s, false, func(run *approvalRun, req protocol.ApprovalRequest) {
		asks++
		run.env.SignalWorkflow(protocol.SignalApproval, protocol.ApprovalAnswer{ID: req.ID, Verdict: protocol.VerdictAlways})
	})
	run.execute(t, protocol.Settings{})
	require.Equal(t, 1, asks, "the second call with the same key was not asked")
	require.Len(t, run.ran, 2)
	require.True(t, run.ran[1].Approved)
}

func TestSessionAlwaysAllowsWithoutAsking(t *testing.T) {
	s := &script{replies: []protocol.LLMCallResult{askedCall("c1", "rm -rf a"), text("Done.")}}
	run := newApprovalRun(t, s, true, nil)
	run.execute(t, protocol.Settings{})
	require.Len(t, run.ran, 1)
	for _, d := range run.delivered {
		require.Nil(t, d.Approval, "nothing was asked")
	}
}

func TestStopEndsTheWaitAndClosesTheRequest(t *testing.T) {
	s := &script{replies: []protocol.LLMCallResult{askedCall("c1", "rm -rf a")}}
	run := newApprovalRun(t, s, false, func(run *approvalRun, _ protocol.ApprovalRequest) { run.env.CancelWorkflow() })
	run.env.ExecuteWorkflow(protocol.TurnWorkflowName, protocol.TurnInput{SessionKey: "cli:direct", Settings: testenv.Settings(protocol.Settings{})})
	require.True(t, run.env.IsWorkflowCompleted())
	require.Error(t, run.env.GetWorkflowError())
	require.Empty(t, run.ran)
	require.Len(t, run.closed, 1)
	require.Equal(t, protocol.VerdictCancelled, run.closed[0].Verdict)
}

func TestWaitShowsInDetailsAndState(t *testing.T) {
	s := &script{replies: []protocol.LLMCallResult{askedCall("c1", "rm -rf build/"), text("Done.")}}
	var state protocol.TurnState
	run := newApprovalRun(t, s, false, func(run *approvalRun, req protocol.ApprovalRequest) {
		v, err := run.env.QueryWorkflow(protocol.QueryState)
		require.NoError(t, err)
		require.NoError(t, v.Get(&state))
		run.env.SignalWorkflow(protocol.SignalApproval, protocol.ApprovalAnswer{ID: req.ID, Verdict: protocol.VerdictApprove})
	})
	run.execute(t, protocol.Settings{})
	require.NotNil(t, state.Waiting)
	require.Equal(t, "exec rm -rf build/", state.Waiting.Call())
}

func TestStatusWhileWaitingSaysWhatWaits(t *testing.T) {
	s := &script{replies: []protocol.LLMCallResult{askedCall("c1", "rm -rf build/"), text("Done.")}}
	var running []string
	run := newApprovalRun(t, s, false, func(run *approvalRun, req protocol.ApprovalRequest) {
		run.env.SignalWorkflow(protocol.SignalInbound, inbound("m2", "/status"))
		run.env.RegisterDelayedCallback(func() {
			run.env.SignalWorkflow(protocol.SignalApproval, protocol.ApprovalAnswer{ID: req.ID, Verdict: protocol.VerdictApprove})
		}, time.Minute)
	})
	run.env.OnActivity(protocol.ActivityCommand, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in protocol.StepInput) (protocol.CommandResult, error) {
			if in.Message.Content != "/status" {
				return protocol.CommandResult{}, nil
			}
			running = append(running, in.Running)
			return protocol.CommandResult{Handled: true, Reply: "status"}, nil
		})
	run.execute(t, protocol.Settings{})
	require.Len(t, running, 1)
	require.Contains(t, running[0], "waiting for approval: exec rm -rf build/ (asked 10 min ago)")
}
