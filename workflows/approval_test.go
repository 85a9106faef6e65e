package workflows

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/nanobot-durable/nanobot/activities"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/owner"
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
	env      *testsuite.TestWorkflowEnvironment
	script   *script
	key      owner.Key // the owner key the COMMAND activity proves answers with
	asked    []protocol.ApprovalAskInput
	closed   []protocol.ApprovalCloseInput
	verified []protocol.ApprovalVerifyInput
	// raced is the verdict the request's record holds when the timer closes it ("": none), proven or not.
	raced       string
	racedProven bool
	// verify checks an answer: the owner key at the activity's boundary, or the real activity.
	verify    func(context.Context, protocol.ApprovalVerifyInput) (bool, error)
	ran       []protocol.ToolCallInput
	results   []protocol.ToolResultInput
	delivered []protocol.DeliverInput
}

// The test environment's run.
const (
	testWorkflowID = "default-test-workflow-id"
	testRunID      = "default-test-run-id"
)

// answer signals an answer proven as the COMMAND activity proves it.
func (run *approvalRun) answer(a protocol.ApprovalAnswer) {
	run.key.ProveAnswer(&a, testWorkflowID, testRunID)
	run.env.SignalWorkflow(protocol.SignalApproval, a)
}

// newApprovalRun mocks every activity an approval touches; answer, when
// set, is signalled once the request is delivered.
func newApprovalRun(t *testing.T, s *script, always bool, answer func(run *approvalRun, req protocol.ApprovalRequest)) *approvalRun {
	t.Helper()
	key, err := owner.NewKey()
	require.NoError(t, err)
	run := &approvalRun{env: newEnv(t), script: s, key: key}
	run.verify = func(_ context.Context, in protocol.ApprovalVerifyInput) (bool, error) {
		return run.key.AnswerProven(in.Answer, in.WorkflowID, in.RunID), nil
	}
	env := run.env
	env.RegisterActivityWithOptions(func(context.Context, protocol.ApprovalAskInput) (protocol.ApprovalAskResult, error) {
		return protocol.ApprovalAskResult{}, nil
	}, activity.RegisterOptions{Name: protocol.ActivityApprovalAsk})
	env.RegisterActivityWithOptions(func(context.Context, protocol.ApprovalCloseInput) (protocol.ApprovalAnswer, error) {
		return protocol.ApprovalAnswer{}, nil
	}, activity.RegisterOptions{Name: protocol.ActivityApprovalClose})
	env.RegisterActivityWithOptions(func(context.Context, protocol.ApprovalVerifyInput) (bool, error) {
		return false, nil
	}, activity.RegisterOptions{Name: protocol.ActivityApprovalVerify})
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
			if run.raced != "" {
				a := protocol.ApprovalAnswer{ID: in.ID, Verdict: run.raced}
				if run.racedProven {
					run.key.ProveAnswer(&a, testWorkflowID, testRunID)
				}
				return a, nil
			}
			return protocol.ApprovalAnswer{ID: in.ID, Verdict: in.Verdict}, nil
		})
	env.OnActivity(protocol.ActivityApprovalVerify, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in protocol.ApprovalVerifyInput) (bool, error) {
			run.verified = append(run.verified, in)
			return run.verify(ctx, in)
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
		run.answer(protocol.ApprovalAnswer{ID: "other", Verdict: protocol.VerdictApprove})
		run.answer(protocol.ApprovalAnswer{ID: req.ID, Verdict: protocol.VerdictApprove, By: "cli:user"})
	})
	run.execute(t, protocol.Settings{})
	require.Len(t, run.asked, 1)
	require.Equal(t, "cli:direct", run.asked[0].OriginKey)
	require.Equal(t, protocol.ApprovalID(testWorkflowID, s.calls[0].Turn+"/c1"), run.asked[0].ID)
	require.Equal(t, testRunID, run.asked[0].RunID, "the record names the run the proof must name")
	require.Equal(t, []protocol.Route{inbound("m1", "").Route}, run.asked[0].Shown, "the request remembers the chat it is shown in")
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
		run.answer(protocol.ApprovalAnswer{ID: req.ID, Verdict: protocol.VerdictDeny, Reason: "not on main"})
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

// TestEveryAskedCallIsLookedUpInTheSession: "always" lives in the
// session, not in the run, so /approvals clear reaches a turn that runs.
func TestEveryAskedCallIsLookedUpInTheSession(t *testing.T) {
	s := &script{replies: []protocol.LLMCallResult{askedCall("c1", "rm -rf a"), askedCall("c2", "rm -rf a"), text("Done.")}}
	asks := 0
	run := newApprovalRun(t, s, false, func(run *approvalRun, req protocol.ApprovalRequest) {
		asks++
		run.answer(protocol.ApprovalAnswer{ID: req.ID, Verdict: protocol.VerdictAlways, Rule: req.Key})
	})
	run.execute(t, protocol.Settings{})
	require.Len(t, run.asked, 2, "the second call was looked up again")
	require.Equal(t, 2, asks, "the session (mocked: nothing allowed) decides, not a cache in the run")
	require.Len(t, run.ran, 2)
}

// TestAnAnswerWithoutAValidProofIsIgnored: a raw signal (no proof, a proof
// for another run, a changed verdict) does not run the call; the wait goes
// on until an answer whose proof checks out.
func TestAnAnswerWithoutAValidProofIsIgnored(t *testing.T) {
	s := &script{replies: []protocol.LLMCallResult{askedCall("c1", "rm -rf build/"), text("Cleaned.")}}
	var ranBeforeGood int
	run := newApprovalRun(t, s, false, func(run *approvalRun, req protocol.ApprovalRequest) {
		run.env.SignalWorkflow(protocol.SignalApproval, protocol.ApprovalAnswer{ID: req.ID, Verdict: protocol.VerdictApprove})
		other := protocol.ApprovalAnswer{ID: req.ID, Verdict: protocol.VerdictApprove}
		run.key.ProveAnswer(&other, testWorkflowID, "another-run")
		run.env.SignalWorkflow(protocol.SignalApproval, other)
		changed := protocol.ApprovalAnswer{ID: req.ID, Verdict: protocol.VerdictDeny}
		run.key.ProveAnswer(&changed, testWorkflowID, testRunID)
		changed.Verdict = protocol.VerdictApprove
		run.env.SignalWorkflow(protocol.SignalApproval, changed)
		run.env.RegisterDelayedCallback(func() {
			ranBeforeGood = len(run.ran)
			run.answer(protocol.ApprovalAnswer{ID: req.ID, Verdict: protocol.VerdictApprove})
		}, time.Hour)
	})
	run.execute(t, protocol.Settings{})
	require.Zero(t, ranBeforeGood, "no bad answer ran the call")
	require.Len(t, run.verified, 4, "each answer was checked")
	require.Len(t, run.ran, 1, "the proven answer ran it once")
	require.Empty(t, run.closed, "it never timed out")
}

// TestAnAnswerThatRacedTheTimerIsCheckedToo: at the timeout the record's
// answer stands only if its proof checks out (a record nobody proved is a timeout).
func TestAnAnswerThatRacedTheTimerIsCheckedToo(t *testing.T) {
	for _, proven := range []bool{false, true} {
		s := &script{replies: []protocol.LLMCallResult{askedCall("c1", "sudo reboot"), text("OK.")}}
		run := newApprovalRun(t, s, false, nil)
		run.raced, run.racedProven = protocol.VerdictApprove, proven
		run.execute(t, protocol.Settings{ApprovalTimeout: time.Hour})
		require.Len(t, run.closed, 1)
		require.Len(t, run.verified, 1, "the raced answer was checked")
		if proven {
			require.Len(t, run.ran, 1, "a proven answer that raced the timer stands")
		} else {
			require.Empty(t, run.ran, "an unproven record is a timeout")
			require.Contains(t, run.results[0].Text, "Nobody approved this call")
		}
	}
}

// TestAnAnswerIsCheckedByTheRealActivity: the same with the real check,
// made with the worker's owner key.
func TestAnAnswerIsCheckedByTheRealActivity(t *testing.T) {
	s := &script{replies: []protocol.LLMCallResult{askedCall("c1", "rm -rf build/"), text("Cleaned.")}}
	var ranBeforeGood int
	run := newApprovalRun(t, s, false, func(run *approvalRun, req protocol.ApprovalRequest) {
		run.env.SignalWorkflow(protocol.SignalApproval, protocol.ApprovalAnswer{ID: req.ID, Verdict: protocol.VerdictApprove, Proof: "00"})
		run.env.RegisterDelayedCallback(func() {
			ranBeforeGood = len(run.ran)
			run.answer(protocol.ApprovalAnswer{ID: req.ID, Verdict: protocol.VerdictApprove})
		}, time.Hour)
	})
	run.verify = activities.New(activities.Deps{Owner: run.key}).Approvals.ApprovalVerify
	run.execute(t, protocol.Settings{})
	require.Zero(t, ranBeforeGood)
	require.Len(t, run.ran, 1)
}

// TestARunWaitingBeforeTheProofKeepsItsPath: a run in flight on the default
// version of approvalProofChange takes an answer without a proof, as it did.
func TestARunWaitingBeforeTheProofKeepsItsPath(t *testing.T) {
	s := &script{replies: []protocol.LLMCallResult{askedCall("c1", "rm -rf build/"), text("Cleaned.")}}
	run := newApprovalRun(t, s, false, func(run *approvalRun, req protocol.ApprovalRequest) {
		run.env.SignalWorkflow(protocol.SignalApproval, protocol.ApprovalAnswer{ID: req.ID, Verdict: protocol.VerdictApprove})
	})
	run.env.OnGetVersion(approvalProofChange, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
	run.execute(t, protocol.Settings{})
	require.Empty(t, run.verified)
	require.Len(t, run.ran, 1)
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
		run.answer(protocol.ApprovalAnswer{ID: req.ID, Verdict: protocol.VerdictApprove})
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
			run.answer(protocol.ApprovalAnswer{ID: req.ID, Verdict: protocol.VerdictApprove})
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
