package integration

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// TestSustainedGoalAtTheWire: /goal lets the model create a goal; its
// first answer is followed by the prompt to go on; it completes the goal
// and the turn ends; /status shows the goal done.
func TestSustainedGoalAtTheWire(t *testing.T) {
	dev := testenv.StartDevServer(t)
	model := modeltest.New(
		modeltest.ToolCalls(modeltest.Call{ID: "g1", Name: "create_goal", Args: `{"objective":"three notes exist","ui_summary":"write notes"}`}),
		modeltest.Text("I wrote the first note."),
		modeltest.ToolCalls(modeltest.Call{ID: "g2", Name: "update_goal", Args: `{"action":"complete"}`}),
		modeltest.Text("All three notes are written."),
	)
	defer model.Close()
	home := testenv.NewHome(t, model.URL(), nil)
	env := home.Env(dev.Addr, "NANOBOT_STREAM=false")

	out, errOut, code := runNanobot(t, env, "agent", "-m", "/goal write three notes")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "↳ create_goal three notes exist\nI wrote the first note.\n↳ update_goal complete\nAll three notes are written.\n", out, "each round is shown")
	require.Equal(t, 4, model.Count())
	reqs := model.Requests()
	offered := func(i int) string {
		var names []string
		for _, d := range reqs[i].Tools {
			names = append(names, d.Name)
		}
		return strings.Join(names, ",")
	}
	require.Contains(t, offered(0), "create_goal")
	third := reqs[2].Messages[len(reqs[2].Messages)-1]
	require.Contains(t, third.Content, "active sustained goal that is not complete yet: three notes exist")

	out, errOut, code = runNanobot(t, env, "agent", "-m", "/status")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "Goal: write notes (complete)")
	require.Equal(t, 4, model.Count(), "/status is answered without the model")
}
