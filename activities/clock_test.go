package activities

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/prompt"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
	"github.com/nanobot-durable/nanobot/session"
)

// TestModelSeesTheTurnsTimeAndStampedHistory: the runtime context after
// this turn's message carries the time it was journaled, in the user's
// timezone, identical on every call of the turn; earlier user messages
// carry their own time; the system prompt stays byte-identical.
func TestModelSeesTheTurnsTimeAndStampedHistory(t *testing.T) {
	model := modeltest.New(modeltest.Text("first"), modeltest.Text("second"), modeltest.Text("third"))
	defer model.Close()
	a := newActivities(t, model)
	ctx := context.Background()
	settings := testenv.Settings(protocol.Settings{Model: "m", Timezone: "Asia/Tokyo"})
	const earlier, now = "2026-03-01T09:00:00.000000", "2026-03-02T23:30:00.000000"
	_, err := a.Store.Append(ctx, "cli:t",
		chat.Message{Role: chat.RoleUser, Content: "remind me about the dentist", Turn: "t0", EntryID: "user", Timestamp: earlier},
		chat.Message{Role: chat.RoleAssistant, Content: "noted", Turn: "t0", EntryID: "final", Timestamp: earlier})
	require.NoError(t, err)

	in := step("t1", "when was that?")
	in.Settings = settings
	_, err = a.set().Turn.Build(ctx, in)
	require.NoError(t, err)
	require.NoError(t, a.Store.Update(ctx, "cli:t", func(s *session.Session) error {
		s.Messages[s.Find("t1", "user")].Timestamp = now // as if the turn began at that instant
		return nil
	}))
	env := activityEnv(a)
	for call := 1; call <= 2; call++ {
		_, err = env.ExecuteActivity(protocol.ActivityLLMCall, protocol.LLMCallInput{
			SessionKey: "cli:t", Turn: "t1", Iteration: call, Call: call, Route: in.Message.Route, Settings: settings})
		require.NoError(t, err)
	}

	at, ok := session.MessageTime(now)
	require.True(t, ok)
	wantRC := prompt.RuntimeContext("cli", "t", at, "Asia/Tokyo")
	require.Contains(t, wantRC, "(Asia/Tokyo, UTC+09:00)")
	reqs := model.Requests()
	require.Len(t, reqs, 2)
	for i, r := range reqs {
		msgs := r.Messages
		require.Equal(t, chat.RoleSystem, msgs[0].Role)
		require.Equal(t, reqs[0].Messages[0].Content, msgs[0].Content, "the system prompt is the same bytes on every call")
		require.NotContains(t, msgs[0].Content, "Current Time", "the clock stays out of the cached system prompt")
		require.Equal(t, "[Message Time: "+earlier+"]\nremind me about the dentist", msgs[1].Content, "request %d: an earlier user message keeps its time", i)
		require.Equal(t, "noted", msgs[2].Content, "assistant replies are not stamped")
		require.Equal(t, "when was that?\n\n"+wantRC, msgs[3].Content, "request %d: the turn's time, not the call's", i)
		require.Equal(t, 1, strings.Count(string(r.Body), "Current Time:"))
	}
}
