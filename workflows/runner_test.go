package workflows

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
)

// script mocks LLMCall with replies in order and records each call's
// input, its task queue and its start-to-close timeout; the first busy
// attempts on the turn's queue answer protocol.ErrBusy.
type script struct {
	replies  []protocol.LLMCallResult
	calls    []protocol.LLMCallInput
	queues   []string
	timeouts []time.Duration
	busy     int
}

func (s *script) install(env *testsuite.TestWorkflowEnvironment) {
	env.OnActivity(protocol.ActivityLLMCall, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in protocol.LLMCallInput) (protocol.LLMCallResult, error) {
			info := activity.GetInfo(ctx)
			s.queues = append(s.queues, info.TaskQueue)
			if s.busy > 0 && info.TaskQueue != protocol.LLMTaskQueue {
				s.busy--
				return protocol.LLMCallResult{}, temporal.NewNonRetryableApplicationError("all slots taken", protocol.ErrBusy, nil)
			}
			s.timeouts = append(s.timeouts, info.Deadline.Sub(info.StartedTime).Round(time.Second)) // the test clock ticks in between
			s.calls = append(s.calls, in)
			if len(s.calls) > len(s.replies) {
				return protocol.LLMCallResult{}, fmt.Errorf("script exhausted at call %d", len(s.calls))
			}
			r := s.replies[len(s.calls)-1]
			r.EntryID = fmt.Sprintf("llm-%d", in.Call)
			return r, nil
		})
}

func (s *script) modes() []string {
	var out []string
	for _, c := range s.calls {
		out = append(out, c.Mode)
	}
	return out
}

func text(s string) protocol.LLMCallResult {
	return protocol.LLMCallResult{ContentPreview: s, ContentChars: len(s), FinishReason: "stop"}
}

func blank(finish string) protocol.LLMCallResult { return protocol.LLMCallResult{FinishReason: finish} }

func toolCall(id string) protocol.LLMCallResult {
	return protocol.LLMCallResult{FinishReason: "tool_calls", ToolCalls: []protocol.ToolCallRef{{ID: id, Name: "read_file", ConcurrencySafe: true}}}
}

// runTurn runs one turn with the scripted model and returns what was delivered and saved.
func runTurn(t *testing.T, s *script, settings protocol.Settings, msgs ...protocol.Inbound) (*testsuite.TestWorkflowEnvironment, []protocol.DeliverInput, protocol.SaveInput) {
	t.Helper()
	env := newEnv(t)
	if len(msgs) == 0 {
		msgs = []protocol.Inbound{inbound("m1", "hi")}
	}
	sendAtStart(env, msgs...)
	s.install(env)
	env.OnActivity(protocol.ActivityTool, mock.Anything, mock.Anything).Return(protocol.ToolCallResult{Preview: "ok"}, nil)
	var delivered []protocol.DeliverInput
	env.OnActivity(protocol.ActivityDeliver, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in protocol.DeliverInput) error { delivered = append(delivered, in); return nil })
	var saved protocol.SaveInput
	env.OnActivity(protocol.ActivitySave, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in protocol.SaveInput) error { saved = in; return nil })
	env.ExecuteWorkflow(protocol.TurnWorkflowName, protocol.TurnInput{SessionKey: "cli:direct", Settings: testenv.Settings(settings)})
	require.True(t, env.IsWorkflowCompleted())
	return env, delivered, saved
}

// TestBusyModelCallIsAskedAgainOnTheLLMQueue: a call that found no free
// slot on the turn's queue is the same call on the LLM queue (one call
// number, one iteration); the next call tries the turn's queue again, and
// each input carries only the settings a model call reads.
func TestBusyModelCallIsAskedAgainOnTheLLMQueue(t *testing.T) {
	s := &script{replies: []protocol.LLMCallResult{toolCall("c1"), text("done")}, busy: 1}
	env, delivered, _ := runTurn(t, s, protocol.Settings{})
	require.NoError(t, env.GetWorkflowError())
	turnQueue := s.queues[0]
	require.NotEqual(t, protocol.LLMTaskQueue, turnQueue)
	require.Equal(t, []string{turnQueue, protocol.LLMTaskQueue, turnQueue}, s.queues)
	require.Equal(t, []int{1, 2}, []int{s.calls[0].Call, s.calls[1].Call})
	require.Equal(t, "llm-2", delivered[0].EntryID)
	for _, c := range s.calls {
		require.Equal(t, testenv.Settings(protocol.Settings{}).ForModelCall(), c.Settings)
		require.Zero(t, c.Settings.MaxIterations, "the loop's own settings stay in the workflow")
	}
}

func TestEmptyRepliesRetryThenSummaryPrompt(t *testing.T) {
	s := &script{replies: []protocol.LLMCallResult{blank("stop"), blank("stop"), text("final answer")}}
	env, delivered, _ := runTurn(t, s, protocol.Settings{})
	require.NoError(t, env.GetWorkflowError())
	require.Equal(t, []string{"", "", protocol.ModeEmptyRetry}, s.modes())
	require.Len(t, delivered, 1)
	require.Equal(t, "llm-3", delivered[0].EntryID)
	require.Equal(t, protocol.StopCompleted, delivered[0].StopReason)
}

func TestEmptyRepliesEndWithEmptyFinalResponse(t *testing.T) {
	s := &script{replies: []protocol.LLMCallResult{blank("stop"), blank("stop"), blank("stop")}}
	_, delivered, saved := runTurn(t, s, protocol.Settings{})
	require.Len(t, s.calls, 3)
	require.Equal(t, protocol.EmptyFinalText, delivered[0].Text)
	require.Equal(t, protocol.StopEmptyFinal, delivered[0].StopReason)
	require.Equal(t, protocol.EmptyFinalText, saved.Reply)
}

func TestBlankContentFilterIsNotRetried(t *testing.T) {
	for _, finish := range []string{"content_filter", "refusal"} {
		s := &script{replies: []protocol.LLMCallResult{blank(finish)}}
		_, delivered, _ := runTurn(t, s, protocol.Settings{})
		require.Len(t, s.calls, 1, finish)
		require.Equal(t, protocol.StopEmptyFinal, delivered[0].StopReason)
	}
}

func TestLengthRecoveryJoinsSegments(t *testing.T) {
	cut := func(s string) protocol.LLMCallResult { r := text(s); r.FinishReason = "length"; return r }
	s := &script{replies: []protocol.LLMCallResult{cut("first "), cut("second "), text("third")}}
	_, delivered, saved := runTurn(t, s, protocol.Settings{})
	require.Equal(t, []string{"", protocol.ModeLength, protocol.ModeLength}, s.modes())
	require.Equal(t, []string{"llm-1", "llm-2", "llm-3"}, saved.Segments)
	require.Equal(t, "final", delivered[0].EntryID, "the joined reply is delivered")
}

func TestLengthRecoveryStopsAfterThree(t *testing.T) {
	cut := func(s string) protocol.LLMCallResult { r := text(s); r.FinishReason = "length"; return r }
	s := &script{replies: []protocol.LLMCallResult{cut("a"), cut("b"), cut("c"), cut("d")}}
	_, _, saved := runTurn(t, s, protocol.Settings{})
	require.Len(t, s.calls, 4)
	require.Len(t, saved.Segments, 4)
}

func TestMaxIterationsFinalizesWithoutTools(t *testing.T) {
	s := &script{replies: []protocol.LLMCallResult{toolCall("a"), toolCall("b"), toolCall("c")}}
	env, delivered, _ := runTurn(t, s, protocol.Settings{MaxIterations: 2})
	require.Equal(t, []string{"", "", protocol.ModeFinalize}, s.modes())
	require.Equal(t, fmt.Sprintf(maxIterationsText, 2), delivered[0].Text)
	require.Equal(t, protocol.StopMaxIterations, delivered[0].StopReason)
	env.AssertNumberOfCalls(t, protocol.ActivityTool, 2)
}

func TestMaxIterationsFinalAnswerIsKept(t *testing.T) {
	s := &script{replies: []protocol.LLMCallResult{toolCall("a"), text("summary of what I did")}}
	_, delivered, _ := runTurn(t, s, protocol.Settings{MaxIterations: 1})
	require.Equal(t, []string{"", protocol.ModeFinalize}, s.modes())
	require.Equal(t, "llm-2", delivered[0].EntryID)
	require.Equal(t, protocol.StopMaxIterations, delivered[0].StopReason)
}

func TestMalformedCallsGetOneCorrectiveRetryThenNoTools(t *testing.T) {
	malformed := protocol.LLMCallResult{FinishReason: "tool_calls", DroppedCalls: 1}
	s := &script{replies: []protocol.LLMCallResult{malformed, malformed, text("answer")}}
	_, delivered, _ := runTurn(t, s, protocol.Settings{})
	require.Equal(t, []string{"", protocol.ModeMalformed, protocol.ModeEmptyRetry}, s.modes())
	require.Equal(t, "llm-3", delivered[0].EntryID)
}

func TestToolsNotRunWhenFinishReasonBlocksThem(t *testing.T) {
	r := toolCall("a")
	r.FinishReason, r.ContentPreview, r.ContentChars = "length", "partial", 7
	s := &script{replies: []protocol.LLMCallResult{r, text(" rest")}}
	env, _, _ := runTurn(t, s, protocol.Settings{})
	env.AssertNotCalled(t, protocol.ActivityTool, mock.Anything, mock.Anything)
}

// TestInjectionLimits sends 17 messages at once: the turn answers the
// first, injects 3 per drain for at most 5 drains, and hands the last one
// to the next run.
func TestInjectionLimits(t *testing.T) {
	msgs := []protocol.Inbound{inbound("m0", "first")}
	for i := 1; i <= 16; i++ {
		msgs = append(msgs, inbound(fmt.Sprintf("m%d", i), fmt.Sprintf("more %d", i)))
	}
	replies := make([]protocol.LLMCallResult, 0, 6)
	for i := 0; i < 6; i++ {
		replies = append(replies, text(fmt.Sprintf("answer %d", i)))
	}
	env := newEnv(t)
	sendAtStart(env, msgs...)
	(&script{replies: replies}).install(env)
	var batches []int
	env.OnActivity(protocol.ActivityInject, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in protocol.InjectInput) error {
			batches = append(batches, len(in.Messages))
			return nil
		})
	var deliveries int
	env.OnActivity(protocol.ActivityDeliver, mock.Anything, mock.Anything).Return(
		func(context.Context, protocol.DeliverInput) error { deliveries++; return nil })
	env.ExecuteWorkflow(protocol.TurnWorkflowName, protocol.TurnInput{SessionKey: "cli:direct", Settings: testenv.Settings(protocol.Settings{})})
	require.Equal(t, []int{3, 3, 3, 3, 3}, batches)
	require.Equal(t, 6, deliveries, "each answer is delivered as it is given")
	var can *workflow.ContinueAsNewError
	require.ErrorAs(t, env.GetWorkflowError(), &can)
}

// TestInlineStatusDuringTurn: /status arriving while the model works is
// answered at once, with the running turn's state, and is not injected.
func TestInlineStatusDuringTurn(t *testing.T) {
	env := newEnv(t)
	sendAtStart(env, inbound("m1", "long question"))
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(protocol.SignalInbound, inbound("s1", "/status")) }, time.Second)
	env.OnActivity(protocol.ActivityLLMCall, mock.Anything, mock.Anything).After(time.Minute).Return(text("done"), nil)
	var commands []protocol.StepInput
	env.OnActivity(protocol.ActivityCommand, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in protocol.StepInput) (protocol.CommandResult, error) {
			commands = append(commands, in)
			if in.Message.Content == "/status" {
				return protocol.CommandResult{Handled: true, Reply: "status…"}, nil
			}
			return protocol.CommandResult{}, nil
		})
	var delivered []protocol.DeliverInput
	env.OnActivity(protocol.ActivityDeliver, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in protocol.DeliverInput) error { delivered = append(delivered, in); return nil })
	env.OnActivity(protocol.ActivityInject, mock.Anything, mock.Anything).Return(nil).Maybe() // for AssertNotCalled
	env.ExecuteWorkflow(protocol.TurnWorkflowName, protocol.TurnInput{SessionKey: "cli:direct", Settings: testenv.Settings(protocol.Settings{})})
	require.NoError(t, env.GetWorkflowError())
	require.Len(t, commands, 2)
	require.Equal(t, "RUN, iteration 1 of 200", commands[1].Running)
	require.Len(t, delivered, 2)
	require.Equal(t, []string{"s1"}, delivered[0].MessageIDs, "the status reply comes first, mid-turn")
	require.Equal(t, []string{"m1"}, delivered[1].MessageIDs)
	env.AssertNotCalled(t, protocol.ActivityInject, mock.Anything, mock.Anything)
}

// TestResumeContinuesAtRun: a turn carried into a new run (continue-as-new
// when history grows) goes straight back to RUN with its counters.
func TestResumeContinuesAtRun(t *testing.T) {
	env := newEnv(t)
	s := &script{replies: []protocol.LLMCallResult{text("finished")}}
	s.install(env)
	resume := &protocol.TurnResume{
		Turn: "turn-1", Message: inbound("m1", "big job"), Answered: []protocol.Inbound{inbound("m1", "big job")},
		Runner: protocol.RunnerState{Iteration: 41, Calls: 41},
		Trace:  []protocol.TraceEntry{{State: "RESTORE", Event: "ok"}},
	}
	var delivered protocol.DeliverInput
	env.OnActivity(protocol.ActivityDeliver, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in protocol.DeliverInput) error { delivered = in; return nil })
	env.OnActivity(protocol.ActivityRestore, mock.Anything, mock.Anything).Return(protocol.RestoreResult{}, nil).Maybe() // for AssertNotCalled
	env.OnActivity(protocol.ActivityBuild, mock.Anything, mock.Anything).Return(protocol.BuildResult{}, nil).Maybe()
	env.ExecuteWorkflow(protocol.TurnWorkflowName, protocol.TurnInput{SessionKey: "cli:direct", Settings: testenv.Settings(protocol.Settings{}), Resume: resume})
	require.NoError(t, env.GetWorkflowError())
	require.Len(t, s.calls, 1)
	require.Equal(t, 42, s.calls[0].Iteration)
	require.Equal(t, 42, s.calls[0].Call)
	require.Equal(t, "turn-1", s.calls[0].Turn, "the journal's turn ID carries over")
	require.Equal(t, "llm-42", delivered.EntryID)
	env.AssertNotCalled(t, protocol.ActivityRestore, mock.Anything, mock.Anything)
	env.AssertNotCalled(t, protocol.ActivityBuild, mock.Anything, mock.Anything)
}

// A parallel batch's progress lines are shown by its first call, in the
// model's order, whichever of its calls starts first; a call run alone
// shows its own.
func TestToolHintsFollowTheModelsOrder(t *testing.T) {
	env := newEnv(t)
	sendAtStart(env, inbound("m1", "look around"))
	batch := protocol.LLMCallResult{FinishReason: "tool_calls", ToolCalls: []protocol.ToolCallRef{
		{ID: "r", Name: "read_file", ConcurrencySafe: true, Hint: "read_file a.md"},
		{ID: "l", Name: "list_dir", ConcurrencySafe: true, Hint: "list_dir ."},
		{ID: "w", Name: "write_file", Hint: "write_file b.md"},
	}}
	(&script{replies: []protocol.LLMCallResult{batch, text("done")}}).install(env)
	hints := map[string][]string{}
	env.OnActivity(protocol.ActivityTool, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in protocol.ToolCallInput) (protocol.ToolCallResult, error) {
			hints[in.CallID] = in.Hints
			return protocol.ToolCallResult{Preview: "ok"}, nil
		})
	env.ExecuteWorkflow(protocol.TurnWorkflowName, protocol.TurnInput{SessionKey: "cli:direct", Settings: testenv.Settings(protocol.Settings{})})
	require.NoError(t, env.GetWorkflowError())
	require.Equal(t, map[string][]string{"r": {"read_file a.md", "list_dir ."}, "l": nil, "w": {"write_file b.md"}}, hints)
}
