package workflows

import (
	"context"
	"testing"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
)

// consolidations records Consolidate calls and answers from a script of
// prompt sizes after each round.
type consolidations struct {
	after []int
	calls []protocol.ConsolidateInput
	order *[]string
}

func (c *consolidations) mock(env *testsuite.TestWorkflowEnvironment) {
	env.OnActivity(protocol.ActivityConsolidate, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in protocol.ConsolidateInput) (protocol.ConsolidateResult, error) {
			c.calls = append(c.calls, in)
			*c.order = append(*c.order, "consolidate:"+in.Reason)
			n := c.after[min(len(c.calls)-1, len(c.after)-1)]
			return protocol.ConsolidateResult{Archived: 4, PromptTokens: n}, nil
		})
}

func memoryTurn(t *testing.T, text string, restore protocol.RestoreResult, measure protocol.MeasureResult, after ...int) (*consolidations, []string) {
	env := newEnv(t)
	var order []string
	sendAtStart(env, inbound("m1", text))
	env.OnActivity(protocol.ActivityRestore, mock.Anything, mock.Anything).Return(restore, nil)
	env.OnActivity(protocol.ActivityBuild, mock.Anything, mock.Anything).Return(
		func(context.Context, protocol.StepInput) (protocol.BuildResult, error) {
			order = append(order, "build")
			return protocol.BuildResult{}, nil
		})
	env.OnActivity(protocol.ActivityCommand, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in protocol.StepInput) (protocol.CommandResult, error) {
			order = append(order, "command")
			if in.Message.Content == "/new" {
				return protocol.CommandResult{Handled: true, Reply: "New session started."}, nil
			}
			return protocol.CommandResult{}, nil
		})
	env.OnActivity(protocol.ActivityMeasure, mock.Anything, mock.Anything).Return(
		func(context.Context, protocol.StepInput) (protocol.MeasureResult, error) {
			order = append(order, "measure")
			return measure, nil
		})
	env.OnActivity(protocol.ActivityLLMCall, mock.Anything, mock.Anything).Return(
		protocol.LLMCallResult{EntryID: "llm-1", ContentPreview: "ok", ContentChars: 2, FinishReason: "stop"}, nil)
	c := &consolidations{after: after, order: &order}
	if len(after) == 0 {
		c.after = []int{0}
	}
	c.mock(env)
	env.ExecuteWorkflow(protocol.TurnWorkflowName, protocol.TurnInput{SessionKey: "cli:direct", Settings: testenv.Settings(protocol.Settings{ConsolidationRatio: 0.5})})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	return c, order
}

func TestConsolidatesBeforeTheTurnUntilUnderTarget(t *testing.T) {
	c, order := memoryTurn(t, "hello", protocol.RestoreResult{EstimatedTokens: 4100, Budget: 4000}, protocol.MeasureResult{}, 3000, 1900)
	require.Len(t, c.calls, 2, "round 2 reached 1900 ≤ 0.5 × 4000")
	require.Equal(t, []int{1, 2}, []int{c.calls[0].Round, c.calls[1].Round})
	require.Equal(t, 2000, c.calls[0].Target)
	require.Equal(t, []string{"consolidate:budget", "consolidate:budget", "command", "build", "measure"}, order)
}

func TestConsolidationStopsAfterFiveRounds(t *testing.T) {
	c, _ := memoryTurn(t, "hello", protocol.RestoreResult{EstimatedTokens: 9000, Budget: 4000}, protocol.MeasureResult{}, 3500)
	require.Len(t, c.calls, protocol.MaxConsolidationRounds)
}

func TestUnderBudgetNothingIsConsolidated(t *testing.T) {
	c, order := memoryTurn(t, "hello", protocol.RestoreResult{EstimatedTokens: 3999, Budget: 4000}, protocol.MeasureResult{PromptTokens: 100, Budget: 4000})
	require.Empty(t, c.calls)
	require.Equal(t, []string{"command", "build", "measure"}, order)
}

func TestConsolidatesAfterSaveWhenTheNextPromptIsOver(t *testing.T) {
	c, order := memoryTurn(t, "hello", protocol.RestoreResult{EstimatedTokens: 100, Budget: 4000}, protocol.MeasureResult{PromptTokens: 4200, Budget: 4000}, 1000)
	require.Len(t, c.calls, 1)
	require.Equal(t, protocol.ConsolidateAfterSave, c.calls[0].Reason)
	require.Equal(t, []string{"command", "build", "measure", "consolidate:after_save"}, order)
}

func TestNewArchivesBeforeTheCommandClears(t *testing.T) {
	c, order := memoryTurn(t, "/new", protocol.RestoreResult{EstimatedTokens: 100, Budget: 4000}, protocol.MeasureResult{})
	require.Len(t, c.calls, 1)
	require.Equal(t, protocol.ConsolidateNew, c.calls[0].Reason)
	require.Equal(t, []string{"consolidate:new", "command"}, order)
}
