package activities

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
	"github.com/nanobot-durable/nanobot/session"
	"github.com/nanobot-durable/nanobot/tools"
)

func TestSustainedGoal(t *testing.T) {
	model := modeltest.New(modeltest.Text("working"), modeltest.Text("still working"))
	defer model.Close()
	a := newActivities(t, model)
	goals := GoalStore{Store: a.Store}
	require.NoError(t, tools.RegisterBuiltins(a.Tools, tools.BuiltinOptions{DisableFiles: true, Goals: goals}))
	ctx := context.Background()

	res, err := a.set().Commands.Command(ctx, step("g0", "/goal"))
	require.NoError(t, err)
	require.True(t, res.Handled, "/goal without a task shows its usage")
	res, err = a.set().Commands.Command(ctx, step("g1", "/goal tidy the notes"))
	require.NoError(t, err)
	require.False(t, res.Handled)
	require.True(t, res.Goal)

	_, err = a.set().Turn.Build(ctx, step("g1", "/goal tidy the notes"))
	require.NoError(t, err)
	env := activityEnv(a)
	call := func(n int, goalTurn bool) protocol.LLMCallResult {
		val, err := env.ExecuteActivity(protocol.ActivityLLMCall, protocol.LLMCallInput{SessionKey: "cli:t", Turn: "g1", Call: n, Iteration: n,
			Settings: testenv.Settings(protocol.Settings{Model: "m"}), Profile: protocol.ProfileFor(protocol.ChatTurn, goalTurn)})
		require.NoError(t, err)
		var res protocol.LLMCallResult
		require.NoError(t, val.Get(&res))
		return res
	}
	first := call(1, true)
	require.False(t, first.GoalActive)
	offered := map[string]bool{}
	for _, d := range model.Requests()[0].Tools {
		offered[d.Name] = true
	}
	require.True(t, offered["create_goal"], "a /goal turn offers create_goal")
	require.True(t, offered["update_goal"])
	require.Contains(t, model.Requests()[0].Messages[1].Content, "The user sets a sustained goal: tidy the notes")

	tenv := tools.Env{SessionKey: "cli:t", Turn: "g1"}
	msg, err := goals.CreateGoal(ctx, tenv, "every note has a title", "tidy notes")
	require.NoError(t, err)
	require.Contains(t, msg, "Goal created: tidy notes")
	_, err = goals.CreateGoal(ctx, tenv, "something else", "x")
	require.ErrorContains(t, err, "a goal is already active")

	second := call(2, false)
	require.True(t, second.GoalActive, "the model call tells the workflow the goal is active")
	offered = map[string]bool{}
	for _, d := range model.Requests()[1].Tools {
		offered[d.Name] = true
	}
	require.False(t, offered["create_goal"], "only a /goal turn may create a goal")
	require.True(t, offered["update_goal"], "an active goal can be ended")

	require.NoError(t, a.set().Turn.Inject(ctx, protocol.InjectInput{SessionKey: "cli:t", Turn: "g1", Cycle: 1, GoalContinue: true}))
	sess, err := a.Store.Load(ctx, "cli:t")
	require.NoError(t, err)
	last := sess.Messages[len(sess.Messages)-1]
	require.Equal(t, "goal-continue-1", last.EntryID)
	require.Contains(t, last.Content, "active sustained goal that is not complete yet: every note has a title")

	st, err := a.set().Commands.Command(ctx, step("g2", "/status"))
	require.NoError(t, err)
	require.Contains(t, st.Reply, "Goal: tidy notes (active)")

	sess, err = a.Store.Load(ctx, "cli:t")
	require.NoError(t, err)
	created := session.GoalOf(sess)
	require.Equal(t, "g1", created.Turn, "the goal names the turn that set it")
	require.NotEmpty(t, created.Since)
	tenv.Turn = "g3"
	msg, err = goals.UpdateGoal(ctx, tenv, "block", "", "", "which folder?")
	require.NoError(t, err)
	sess, err = a.Store.Load(ctx, "cli:t")
	require.NoError(t, err)
	blocked := session.GoalOf(sess)
	require.Equal(t, created.Since, blocked.Since, "an update keeps when the goal was set")
	require.Equal(t, "g3", blocked.Turn, "and names the turn that changed it")
	require.Contains(t, msg, "Goal blocked: tidy notes")
	st, err = a.set().Commands.Command(ctx, step("g3", "/status"))
	require.NoError(t, err)
	require.Contains(t, st.Reply, "Goal: tidy notes (blocked): which folder?")
	_, err = goals.UpdateGoal(ctx, tenv, "complete", "", "", "")
	require.ErrorContains(t, err, "there is no active goal")
}
