package activities

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// TestContextBlockLimitTrimsTheReplayedHistory: agents.defaults.contextBlockLimit
// bounds the history a model call replays, below the window's own budget.
func TestContextBlockLimitTrimsTheReplayedHistory(t *testing.T) {
	sent := func(limit int) int {
		model := modeltest.New(modeltest.Text("ok"))
		defer model.Close()
		a := newActivities(t, model)
		ctx := context.Background()
		var old []chat.Message
		for i := range 40 {
			old = append(old,
				chat.Message{Role: chat.RoleUser, Content: fmt.Sprintf("question %d %s", i, strings.Repeat("word ", 60)), Turn: fmt.Sprintf("o%d", i), EntryID: "user"},
				chat.Message{Role: chat.RoleAssistant, Content: "answer " + strings.Repeat("word ", 60), Turn: fmt.Sprintf("o%d", i), EntryID: "final"})
		}
		_, err := a.Store.Append(ctx, "cli:t", old...)
		require.NoError(t, err)
		settings := testenv.Settings(protocol.Settings{Model: "m", ContextBlockLimit: limit})
		in := step("t1", "and now?")
		in.Settings = settings
		_, err = a.set().Turn.Build(ctx, in)
		require.NoError(t, err)
		_, err = activityEnv(a).ExecuteActivity(protocol.ActivityLLMCall, protocol.LLMCallInput{SessionKey: "cli:t", Turn: "t1", Iteration: 1, Route: in.Message.Route, Settings: settings})
		require.NoError(t, err)
		return len(model.Requests()[0].Messages)
	}
	all, limited := sent(0), sent(2000)
	require.Equal(t, 1+80+1, all, "without a limit the whole history fits the window")
	require.Less(t, limited, all/2, "a 2000-token block keeps only the recent turns")
	require.Greater(t, limited, 2, "the current message stays")
}
