package workflows

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
)

// stubs give the test suite activity signatures to register; each test mocks them.
func stubRestore(context.Context, protocol.StepInput) (protocol.RestoreResult, error) {
	return protocol.RestoreResult{}, nil
}
func stubCompact(context.Context, protocol.StepInput) (protocol.CompactResult, error) {
	return protocol.CompactResult{}, nil
}
func stubCommand(context.Context, protocol.StepInput) (protocol.CommandResult, error) {
	return protocol.CommandResult{}, nil
}
func stubBuild(context.Context, protocol.StepInput) (protocol.BuildResult, error) {
	return protocol.BuildResult{}, nil
}

// stubBuildElsewhere is BuildHere on a turn worker without the workspace.
func stubBuildElsewhere(context.Context, protocol.StepInput) (protocol.BuildResult, error) {
	return protocol.BuildResult{}, temporal.NewNonRetryableApplicationError("the workspace is on another host", protocol.ErrNotHere, nil)
}
func stubSave(context.Context, protocol.SaveInput) error { return nil }
func stubLLM(context.Context, protocol.LLMCallInput) (protocol.LLMCallResult, error) {
	return protocol.LLMCallResult{}, errors.New("not mocked")
}
func stubTool(context.Context, protocol.ToolCallInput) (protocol.ToolCallResult, error) {
	return protocol.ToolCallResult{}, errors.New("not mocked")
}
func stubMeasure(context.Context, protocol.StepInput) (protocol.MeasureResult, error) {
	return protocol.MeasureResult{}, nil
}
func stubConsolidate(context.Context, protocol.ConsolidateInput) (protocol.ConsolidateResult, error) {
	return protocol.ConsolidateResult{}, errors.New("not mocked")
}
func stubDeliver(context.Context, protocol.DeliverInput) error { return nil }
func stubInject(context.Context, protocol.InjectInput) error   { return nil }
func stubMark(context.Context, protocol.DeliverInput) error    { return nil }
func stubToolResult(context.Context, protocol.ToolResultInput) (protocol.ToolCallResult, error) {
	return protocol.ToolCallResult{}, errors.New("not mocked")
}

func newEnv(t *testing.T) *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	// A loaded machine (CI, parallel packages) can stall a goroutine past the 1 s default.
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: time.Minute})
	env.RegisterWorkflowWithOptions(TurnWorkflow, workflow.RegisterOptions{Name: protocol.TurnWorkflowName})
	for name, fn := range map[string]any{
		protocol.ActivityRestore: stubRestore, protocol.ActivityCompact: stubCompact,
		protocol.ActivityCommand: stubCommand, protocol.ActivityBuild: stubBuild, protocol.ActivitySave: stubSave,
		protocol.ActivityBuildHere: stubBuildElsewhere,
		protocol.ActivityLLMCall:   stubLLM, protocol.ActivityTool: stubTool, protocol.ActivityDeliver: stubDeliver,
		protocol.ActivityInject: stubInject, protocol.ActivityMarkUndelivered: stubMark,
		protocol.ActivityMeasure: stubMeasure, protocol.ActivityConsolidate: stubConsolidate,
		protocol.ActivityToolResult: stubToolResult,
	} {
		env.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name})
	}
	return env
}

func inbound(id, text string) protocol.Inbound {
	return protocol.Inbound{ID: id, SessionKey: "cli:direct", Route: protocol.Route{Channel: "cli", ChatID: "direct", Queue: "replies"}, Content: text}
}

func sendAtStart(env *testsuite.TestWorkflowEnvironment, msgs ...protocol.Inbound) {
	env.RegisterDelayedCallback(func() {
		for _, m := range msgs {
			env.SignalWorkflow(protocol.SignalInbound, m)
		}
	}, 0)
}

func states(trace []protocol.TraceEntry) []string {
	var out []string
	for _, e := range trace {
		out = append(out, e.State+":"+e.Event)
	}
	return out
}

func TestTurnTextReply(t *testing.T) {
	env := newEnv(t)
	sendAtStart(env, inbound("m1", "hello"))
	env.OnActivity(protocol.ActivityLLMCall, mock.Anything, mock.Anything).Return(
		protocol.LLMCallResult{EntryID: "llm-1", ContentPreview: "Hi there!", ContentChars: 9, FinishReason: "stop"}, nil).Once()
	var delivered protocol.DeliverInput
	env.OnActivity(protocol.ActivityDeliver, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in protocol.DeliverInput) error { delivered = in; return nil }).Once()
	var saved protocol.SaveInput
	env.OnActivity(protocol.ActivitySave, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in protocol.SaveInput) error { saved = in; return nil }).Once()

	env.ExecuteWorkflow(protocol.TurnWorkflowName, protocol.TurnInput{SessionKey: "cli:direct", Settings: testenv.Settings(protocol.Settings{})})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var res protocol.TurnResult
	require.NoError(t, env.GetWorkflowResult(&res))
	require.Equal(t, []string{"RESTORE:ok", "COMPACT:ok", "COMMAND:dispatch", "BUILD:ok", "RUN:ok", "SAVE:ok", "RESPOND:ok"}, states(res.Trace))
	require.Equal(t, protocol.StopCompleted, res.StopReason)
	require.Equal(t, 1, res.Iterations)
	require.Equal(t, "llm-1", delivered.EntryID)
	require.Equal(t, []string{"m1"}, delivered.MessageIDs)
	require.Equal(t, "llm-1", saved.FinalEntry)
	env.AssertExpectations(t)
}

func TestTurnToolRoundTrip(t *testing.T) {
	env := newEnv(t)
	sendAtStart(env, inbound("m1", "read the readme"))
	env.OnActivity(protocol.ActivityLLMCall, mock.Anything, mock.MatchedBy(func(in protocol.LLMCallInput) bool { return in.Iteration == 1 })).Return(
		protocol.LLMCallResult{EntryID: "llm-1", FinishReason: "tool_calls", ToolCalls: []protocol.ToolCallRef{
			{ID: "c1", Name: "read_file", ConcurrencySafe: true}, {ID: "c2", Name: "list_dir", ConcurrencySafe: true},
			{ID: "c3", Name: "write_file"},
		}}, nil).Once()
	env.OnActivity(protocol.ActivityLLMCall, mock.Anything, mock.MatchedBy(func(in protocol.LLMCallInput) bool { return in.Iteration == 2 })).Return(
		protocol.LLMCallResult{EntryID: "llm-2", ContentPreview: "Done.", ContentChars: 5, FinishReason: "stop"}, nil).Once()
	var ran []string
	env.OnActivity(protocol.ActivityTool, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in protocol.ToolCallInput) (protocol.ToolCallResult, error) {
			ran = append(ran, in.CallID)
			require.Equal(t, 1, in.Iteration)
			return protocol.ToolCallResult{Preview: "ok"}, nil
		}).Times(3)

	env.ExecuteWorkflow(protocol.TurnWorkflowName, protocol.TurnInput{SessionKey: "cli:direct", Settings: testenv.Settings(protocol.Settings{})})
	require.NoError(t, env.GetWorkflowError())
	var res protocol.TurnResult
	require.NoError(t, env.GetWorkflowResult(&res))
	require.Equal(t, 2, res.Iterations)
	require.ElementsMatch(t, []string{"c1", "c2", "c3"}, ran)
	require.Equal(t, "c3", ran[2], "the side-effecting call runs after the parallel reads")
	env.AssertExpectations(t)
}

func TestTurnCommandShortcut(t *testing.T) {
	env := newEnv(t)
	sendAtStart(env, inbound("m1", "/help"))
	env.OnActivity(protocol.ActivityCommand, mock.Anything, mock.Anything).Return(
		protocol.CommandResult{Handled: true, Command: "/help", Reply: "commands…"}, nil).Once()
	var delivered protocol.DeliverInput
	env.OnActivity(protocol.ActivityDeliver, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in protocol.DeliverInput) error { delivered = in; return nil }).Once()
	// Mocked so that AssertNotCalled below can see a call.
	env.OnActivity(protocol.ActivityLLMCall, mock.Anything, mock.Anything).Return(protocol.LLMCallResult{}, errors.New("no model")).Maybe()
	env.OnActivity(protocol.ActivityBuild, mock.Anything, mock.Anything).Return(protocol.BuildResult{}, nil).Maybe()

	env.ExecuteWorkflow(protocol.TurnWorkflowName, protocol.TurnInput{SessionKey: "cli:direct", Settings: testenv.Settings(protocol.Settings{})})
	require.NoError(t, env.GetWorkflowError())
	var res protocol.TurnResult
	require.NoError(t, env.GetWorkflowResult(&res))
	require.Equal(t, []string{"RESTORE:ok", "COMPACT:ok", "COMMAND:shortcut"}, states(res.Trace))
	require.Equal(t, "commands…", delivered.Text)
	require.Equal(t, protocol.StopCommand, res.StopReason)
	env.AssertNotCalled(t, protocol.ActivityLLMCall, mock.Anything, mock.Anything)
	env.AssertNotCalled(t, protocol.ActivityBuild, mock.Anything, mock.Anything)
}

func TestTurnModelErrorBecomesReply(t *testing.T) {
	env := newEnv(t)
	sendAtStart(env, inbound("m1", "hi"))
	env.OnActivity(protocol.ActivityLLMCall, mock.Anything, mock.Anything).Return(
		protocol.LLMCallResult{}, temporal.NewNonRetryableApplicationError("401 invalid api key", protocol.ErrProviderNonRetryable, nil))
	var delivered protocol.DeliverInput
	env.OnActivity(protocol.ActivityDeliver, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in protocol.DeliverInput) error { delivered = in; return nil })
	env.ExecuteWorkflow(protocol.TurnWorkflowName, protocol.TurnInput{SessionKey: "cli:direct", Settings: testenv.Settings(protocol.Settings{})})
	require.NoError(t, env.GetWorkflowError())
	require.Equal(t, "401 invalid api key", delivered.Text)
	require.Equal(t, protocol.StopError, delivered.StopReason)
}

// TestMachineUnknownEventFailsLoudly drives the state machine with a
// handler that reports an event the table does not know.
func TestMachineUnknownEventFailsLoudly(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	wf := func(ctx workflow.Context) error {
		m := machine{table: TurnTable, handlers: map[State]handler{
			Restore: func(workflow.Context) (Event, error) { return EvOK, nil },
			Compact: func(workflow.Context) (Event, error) { return "bogus", nil },
		}}
		return m.run(ctx, Restore, Done)
	}
	env.RegisterWorkflowWithOptions(wf, workflow.RegisterOptions{Name: "machine"})
	env.ExecuteWorkflow("machine")
	err := env.GetWorkflowError()
	require.Error(t, err)
	var appErr *temporal.ApplicationError
	require.ErrorAs(t, err, &appErr)
	require.Equal(t, ErrNoTransition, appErr.Type())
	require.Contains(t, appErr.Error(), `no transition from state COMPACT on event "bogus"`)
}

func TestTurnTableCoversEveryState(t *testing.T) {
	seen := map[State]bool{}
	for _, tr := range TurnTable {
		seen[tr.From], seen[tr.To] = true, true
	}
	for _, s := range []State{Restore, Compact, Command, Build, Run, Save, Respond, Done} {
		require.True(t, seen[s], "state %s is in the table", s)
	}
}
