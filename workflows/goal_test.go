package workflows

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
)

// goalScript answers every model call with a text; the goal stays active
// until the call numbered doneAt (0: never).
func goalScript(t *testing.T, doneAt int) (*script, *[]protocol.InjectInput, *deliveries, protocol.SaveInput) {
	t.Helper()
	s := &script{}
	for i := 1; i <= 20; i++ {
		r := text("round")
		r.GoalActive = doneAt == 0 || i < doneAt
		s.replies = append(s.replies, r)
	}
	env := newEnv(t)
	sendAtStart(env, inbound("m1", "/goal tidy every file"))
	env.OnActivity(protocol.ActivityCommand, mock.Anything, mock.Anything).Return(protocol.CommandResult{Goal: true}, nil)
	s.install(env)
	var mu sync.Mutex
	var injects []protocol.InjectInput
	env.OnActivity(protocol.ActivityInject, mock.Anything, mock.Anything).Return(func(_ context.Context, in protocol.InjectInput) error {
		mu.Lock()
		defer mu.Unlock()
		injects = append(injects, in)
		return nil
	})
	d := &deliveries{}
	env.OnActivity(protocol.ActivityDeliver, mock.Anything, mock.Anything).Return(d.mock(nil))
	var saved protocol.SaveInput
	env.OnActivity(protocol.ActivitySave, mock.Anything, mock.Anything).Return(func(_ context.Context, in protocol.SaveInput) error { saved = in; return nil })
	env.ExecuteWorkflow(protocol.TurnWorkflowName, protocol.TurnInput{SessionKey: "cli:direct", Settings: testenv.Settings(protocol.Settings{})})
	require.NoError(t, env.GetWorkflowError())
	return s, &injects, d, saved
}

func TestActiveGoalContinuesAfterAnAnswer(t *testing.T) {
	s, injects, d, saved := goalScript(t, 3)
	require.Len(t, s.calls, 3, "two prompts to go on, then the goal is done")
	for i, c := range s.calls {
		require.True(t, c.Profile.Goal, "a /goal turn offers create_goal")
		require.Equal(t, goalModelTimeout, s.timeouts[i], "goal turns have no wall-clock limit")
	}
	require.Len(t, *injects, 2)
	for i, in := range *injects {
		require.True(t, in.GoalContinue)
		require.Equal(t, i+1, in.Cycle)
	}
	require.Len(t, d.ins, 3, "each round's answer is shown, then the final one")
	require.Equal(t, []string{"llm-1", "llm-2", "llm-3"}, []string{d.ins[0].EntryID, d.ins[1].EntryID, d.ins[2].EntryID})
	require.Equal(t, "llm-3", saved.FinalEntry)
	require.Equal(t, protocol.StopCompleted, saved.StopReason)
}

func TestGoalContinuationsAreBounded(t *testing.T) {
	s, injects, _, _ := goalScript(t, 0)
	require.Len(t, s.calls, maxGoalContinuations+1, "at most 12 prompts to go on in one turn")
	require.Len(t, *injects, maxGoalContinuations)
}
