package workflows

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
)

// withdrawal is what one withdraw update answered: the message given back, or why not.
type withdrawal struct {
	got      protocol.Withdrawn
	refused  string // the application error type of a refusal
	accepted bool
}

// withdrawAt asks the turn to withdraw id after delay; the answer is read once the run ended.
func withdrawAt(t *testing.T, env *testsuite.TestWorkflowEnvironment, delay time.Duration, id string) *withdrawal {
	t.Helper()
	w := &withdrawal{}
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(protocol.UpdateWithdraw, "withdraw-"+id+"-"+delay.String(), &testsuite.TestUpdateCallback{
			OnAccept: func() { w.accepted = true },
			OnReject: func(err error) {
				var app *temporal.ApplicationError
				require.ErrorAs(t, err, &app)
				w.refused = app.Type()
			},
			OnComplete: func(v any, err error) {
				require.NoError(t, err)
				w.got = v.(protocol.Withdrawn)
			},
		}, id)
	}, delay)
	return w
}

// TestWithdrawBeforeInjection: of two messages queued behind a slow model
// call, the one withdrawn is never injected, answered or counted; the turn's
// own message, an injected one and an unknown ID are refused, each with its reason.
func TestWithdrawBeforeInjection(t *testing.T) {
	env := newEnv(t)
	sendAtStart(env, inbound("m1", "clean the build"))
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(protocol.SignalInbound, inbound("m2", "then tidy the docs"))
		env.SignalWorkflow(protocol.SignalInbound, inbound("m3", "and delete the logs"))
	}, time.Second)
	gone := withdrawAt(t, env, 2*time.Second, "m3")
	own := withdrawAt(t, env, 3*time.Second, "m1")
	unknown := withdrawAt(t, env, 4*time.Second, "nope")
	again := withdrawAt(t, env, 5*time.Second, "m3")
	injected := withdrawAt(t, env, 90*time.Second, "m2") // during the second model call, after the injection

	var llm int
	env.OnActivity(protocol.ActivityLLMCall, mock.Anything, mock.Anything).After(time.Minute).Return(
		func(context.Context, protocol.LLMCallInput) (protocol.LLMCallResult, error) {
			llm++
			return textReply("answer"), nil
		})
	var injections [][]string
	env.OnActivity(protocol.ActivityInject, mock.Anything, mock.Anything).Return(func(_ context.Context, in protocol.InjectInput) error {
		injections = append(injections, ids(in.Messages))
		return nil
	})
	var delivered [][]string
	env.OnActivity(protocol.ActivityDeliver, mock.Anything, mock.Anything).Return(func(_ context.Context, in protocol.DeliverInput) error {
		delivered = append(delivered, in.MessageIDs)
		return nil
	})
	env.ExecuteWorkflow(protocol.TurnWorkflowName, protocol.TurnInput{SessionKey: "cli:direct", Settings: testenv.Settings(protocol.Settings{})})
	require.NoError(t, env.GetWorkflowError(), "nothing is left to carry: m3 is gone")

	require.True(t, gone.accepted)
	require.Equal(t, protocol.Withdrawn{ID: "m3", Preview: "and delete the logs"}, gone.got)
	require.Equal(t, protocol.ErrWithdrawTaken, own.refused, "the turn's own message")
	require.Equal(t, protocol.ErrWithdrawUnknown, unknown.refused)
	require.Equal(t, protocol.ErrWithdrawUnknown, again.refused, "withdrawn once")
	require.Equal(t, protocol.ErrWithdrawTaken, injected.refused, "injected: it will be answered")
	require.Equal(t, [][]string{{"m2"}}, injections, "only the message left waiting is injected")
	require.Equal(t, [][]string{{"m1"}, {"m2"}}, delivered, "m3 is never answered")
	require.Equal(t, 2, llm)
	var res protocol.TurnResult
	require.NoError(t, env.GetWorkflowResult(&res))
	require.Equal(t, []string{"m1", "m2"}, res.MessageIDs)
}

// TestWithdrawWhileTheBatchIsJournaled: a message of the batch being
// injected is already taken; one behind the batch can still go.
func TestWithdrawWhileTheBatchIsJournaled(t *testing.T) {
	env := newEnv(t)
	sendAtStart(env, inbound("m1", "first"))
	env.RegisterDelayedCallback(func() {
		for _, m := range []protocol.Inbound{inbound("m2", "a"), inbound("m3", "b"), inbound("m4", "c"), inbound("m5", "d")} {
			env.SignalWorkflow(protocol.SignalInbound, m)
		}
	}, time.Second)
	inBatch := withdrawAt(t, env, 70*time.Second, "m2")
	behind := withdrawAt(t, env, 71*time.Second, "m5")
	env.OnActivity(protocol.ActivityLLMCall, mock.Anything, mock.Anything).After(time.Minute).Return(textReply("answer"), nil)
	var injections [][]string
	env.OnActivity(protocol.ActivityInject, mock.Anything, mock.Anything).After(30 * time.Second).Return(func(_ context.Context, in protocol.InjectInput) error {
		injections = append(injections, ids(in.Messages))
		return nil
	})
	env.OnActivity(protocol.ActivityDeliver, mock.Anything, mock.Anything).Return(nil)
	env.ExecuteWorkflow(protocol.TurnWorkflowName, protocol.TurnInput{SessionKey: "cli:direct", Settings: testenv.Settings(protocol.Settings{})})
	require.NoError(t, env.GetWorkflowError(), "m5 withdrawn: nothing is carried")
	require.Equal(t, protocol.ErrWithdrawTaken, inBatch.refused)
	require.Equal(t, "m5", behind.got.ID)
	require.Equal(t, [][]string{{"m2", "m3", "m4"}}, injections)
	var res protocol.TurnResult
	require.NoError(t, env.GetWorkflowResult(&res))
	require.Equal(t, []string{"m1", "m2", "m3", "m4"}, res.MessageIDs)
}

// TestWithdrawKeepsAMessageOutOfTheNextTurn: messages that arrive during a
// command are carried to the next run; a withdrawn one is not among them.
func TestWithdrawKeepsAMessageOutOfTheNextTurn(t *testing.T) {
	env := newEnv(t)
	sendAtStart(env, inbound("m1", "/new"))
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(protocol.SignalInbound, inbound("m2", "hello again"))
		env.SignalWorkflow(protocol.SignalInbound, inbound("m3", "oops, not this"))
	}, time.Second)
	gone := withdrawAt(t, env, 2*time.Second, "m3")
	env.OnActivity(protocol.ActivityCommand, mock.Anything, mock.Anything).After(time.Minute).Return(
		protocol.CommandResult{Handled: true, Command: "/new", Reply: "New session started."}, nil)
	env.OnActivity(protocol.ActivityDeliver, mock.Anything, mock.Anything).Return(nil)
	env.ExecuteWorkflow(protocol.TurnWorkflowName, protocol.TurnInput{SessionKey: "cli:direct", Settings: testenv.Settings(protocol.Settings{})})
	require.Equal(t, "m3", gone.got.ID)
	var can *workflow.ContinueAsNewError
	require.ErrorAs(t, env.GetWorkflowError(), &can)
	var next protocol.TurnInput
	require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &next))
	require.Equal(t, []string{"m2"}, ids(next.Carry), "the next turn starts with m2 only")
}

// TestWithdrawDuringTheAnswerEndsTheTurn: the one message waiting is
// withdrawn while the answer is delivered: the turn ends with that answer
// instead of asking the model again with nothing new.
func TestWithdrawDuringTheAnswerEndsTheTurn(t *testing.T) {
	env := newEnv(t)
	sendAtStart(env, inbound("m1", "first"))
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(protocol.SignalInbound, inbound("m2", "more")) }, time.Second)
	gone := withdrawAt(t, env, 70*time.Second, "m2")
	var llm int
	env.OnActivity(protocol.ActivityLLMCall, mock.Anything, mock.Anything).After(time.Minute).Return(
		func(context.Context, protocol.LLMCallInput) (protocol.LLMCallResult, error) {
			llm++
			return textReply("answer"), nil
		})
	env.OnActivity(protocol.ActivityDeliver, mock.Anything, mock.Anything).After(30 * time.Second).Return(nil)
	env.OnActivity(protocol.ActivityInject, mock.Anything, mock.Anything).Return(nil).Maybe() // for AssertNotCalled
	env.ExecuteWorkflow(protocol.TurnWorkflowName, protocol.TurnInput{SessionKey: "cli:direct", Settings: testenv.Settings(protocol.Settings{})})
	require.NoError(t, env.GetWorkflowError())
	require.Equal(t, "m2", gone.got.ID)
	require.Equal(t, 1, llm, "no second call for a message that was withdrawn")
	env.AssertNotCalled(t, protocol.ActivityInject, mock.Anything, mock.Anything)
}

func ids(msgs []protocol.Inbound) []string {
	out := make([]string, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, m.ID)
	}
	return out
}
