package web

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/session"
)

// TestGoalsThroughTheGuard: /api/goals lists every session's open goal
// with its state and the Temporal run that last changed it, then the ended
// ones, and refuses a missing token, a foreign Host and another Origin.
func TestGoalsThroughTheGuard(t *testing.T) {
	const token = "s3cret"
	c, _, base := startChannel(t, token)
	c.UseTemporal(nil, "http://ui.test", "default")
	ctx := context.Background()
	put := func(key string, goal map[string]any) {
		t.Helper()
		_, err := c.store.Append(ctx, key, chat.Message{Role: chat.RoleUser, Content: "hello", Turn: "r0", EntryID: "u"})
		require.NoError(t, err)
		if goal == nil {
			return
		}
		require.NoError(t, c.store.Update(ctx, key, func(s *session.Session) error {
			s.Metadata[session.GoalKey] = goal // as a journal read back from its file holds it
			return nil
		}))
	}
	put("web:notes", map[string]any{"objective": "three notes exist", "ui_summary": "write notes", "status": "active",
		"since": "2026-12-01T10:00:00.000000", "updated": "2026-12-01T10:05:00.000000", "turn": "run-notes"})
	put("telegram:42", map[string]any{"objective": "the build is green", "status": "blocked", "reason": "which branch?",
		"since": "2026-12-01T09:00:00.000000", "updated": "2026-12-01T11:00:00.000000"})
	put("web:done", map[string]any{"objective": "the report is sent", "status": "complete", "updated": "2026-12-01T12:00:00.000000", "turn": "run-done"})
	put("web:plain", nil)
	_, port, err := net.SplitHostPort(base[len("http://"):])
	require.NoError(t, err)
	auth := []string{"Authorization", "Bearer " + token}

	a := call(t, http.MethodGet, base+"/api/goals", "", append(auth, "Origin", "http://127.0.0.1:"+port)...)
	require.Equal(t, http.StatusOK, a.status, a.body)
	var got struct{ Goals []goalView }
	require.NoError(t, json.Unmarshal([]byte(a.body), &got))
	var sessions []string
	for _, g := range got.Goals {
		sessions = append(sessions, g.Session)
	}
	require.Equal(t, []string{"telegram:42", "web:notes", "web:done"}, sessions, "open goals first, newest first; a session without a goal is not listed")
	require.Equal(t, "blocked", got.Goals[0].Status)
	require.Equal(t, "which branch?", got.Goals[0].Reason)
	require.Empty(t, got.Goals[0].Inspect, "no turn recorded: no link")
	notes := got.Goals[1]
	require.Equal(t, "active", notes.Status)
	require.Equal(t, "three notes exist", notes.Objective)
	require.Equal(t, "write notes", notes.Summary)
	require.Equal(t, "2026-12-01T10:00:00.000000", notes.Since)
	require.Equal(t, "http://ui.test/namespaces/default/workflows/turn%2Fweb:notes/run-notes/history", notes.Inspect, "linked to the run that set it")
	require.Equal(t, "complete", got.Goals[2].Status)

	for _, r := range []struct {
		status int
		header []string
	}{
		{http.StatusUnauthorized, nil},
		{http.StatusMisdirectedRequest, append(auth, "Host", "evil.example:"+port, "Origin", "http://evil.example:"+port)},
		{http.StatusForbidden, append(auth, "Origin", "http://evil.example")},
	} {
		a = call(t, http.MethodGet, base+"/api/goals", "", r.header...)
		require.Equal(t, r.status, a.status, a.body)
		require.NotContains(t, a.body, "three notes exist")
	}
}
