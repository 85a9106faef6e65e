package web

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/memory/gitstore"
	"github.com/nanobot-durable/nanobot/session"
)

func TestContextMeterMeasuresAsCompactionDoes(t *testing.T) {
	c, _, base := startChannelWith(t, func(cfg *config.Config) {
		cfg.Agents.Defaults.ContextWindowTokens, cfg.Agents.Defaults.MaxTokens = 3000, 500 // budget 1476
		cfg.ModelPresets = map[string]config.ModelPreset{"big": {Model: "big-model", ContextWindowTokens: 200000, MaxTokens: 8000}}
	})
	ctx := context.Background()
	long := strings.Repeat("word ", 400)
	for _, turn := range []string{"r1", "r2", "r3", "r4", "r5"} {
		_, err := c.store.Append(ctx, "web:meter", chat.Message{Role: chat.RoleUser, Content: long, Turn: turn, EntryID: "u"},
			chat.Message{Role: chat.RoleAssistant, Content: "ok", Turn: turn, EntryID: "a"})
		require.NoError(t, err)
	}
	get := func() contextView {
		t.Helper()
		a := call(t, http.MethodGet, base+"/api/context?chat=meter", "")
		require.Equal(t, http.StatusOK, a.status, a.body)
		var v contextView
		require.NoError(t, json.Unmarshal([]byte(a.body), &v))
		return v
	}
	v := get()
	require.Equal(t, 1476, v.Budget, "context window − max tokens − 1024")
	require.Equal(t, 738, v.Target, "budget × consolidationRatio")
	require.Greater(t, v.Used, v.Budget, "five long messages")
	require.Contains(t, v.Next, "over the budget: the next turn first archives")
	require.Equal(t, "after 15 min idle, compaction archives all but the last 8 of the 10 messages since the last archive", v.Idle)

	// /model big: the meter follows the session's model.
	require.NoError(t, c.store.Update(ctx, "web:meter", func(s *session.Session) error {
		s.Metadata[session.ModelPresetKey] = "big"
		return nil
	}))
	v = get()
	require.Equal(t, "big-model", v.Model)
	require.Equal(t, 200000-8000-1024, v.Budget)
	require.Less(t, v.Used, v.Budget)
	require.Contains(t, v.Next, "at 191k tokens a turn first archives the oldest turns into memory, down to about 95k")

	require.Equal(t, http.StatusBadRequest, call(t, http.MethodGet, base+"/api/context?chat=../x", "").status)
}

func TestMemoryFilesAndDreamsLastChange(t *testing.T) {
	c, _, base := startChannel(t, "s3cret")
	get := func() (body struct {
		Files []memoryFileView
		Dream *dreamView
	}) {
		t.Helper()
		a := call(t, http.MethodGet, base+"/api/memory", "", "Authorization", "Bearer s3cret")
		require.Equal(t, http.StatusOK, a.status, a.body)
		require.NoError(t, json.Unmarshal([]byte(a.body), &body))
		return body
	}
	require.Equal(t, http.StatusUnauthorized, call(t, http.MethodGet, base+"/api/memory", "").status)
	require.Equal(t, http.StatusUnauthorized, call(t, http.MethodGet, base+"/api/context?chat=a", "").status)

	b := get()
	require.Nil(t, b.Dream, "Dream has not run")
	require.Equal(t, []memoryFileView{{Name: "MEMORY.md", Missing: true}, {Name: "USER.md", Missing: true}, {Name: "SOUL.md", Missing: true}}, b.Files)
	require.NoDirExists(t, gitstore.Dir(c.workspace), "reading does not create the memory repository")

	repo := testenv.DreamLearned(t, c.workspace)
	testenv.WriteFile(t, c.workspace, "SOUL.md", "calm\n")
	_, _, err := repo.Commit("restore: not Dream's", time.Now())
	require.NoError(t, err)

	b = get()
	require.Equal(t, "# Memory\n- likes green tea\n", b.Files[0].Text)
	require.Equal(t, memoryFileView{Name: "USER.md", Text: "Name: Ada\n"}, b.Files[1])
	require.NotNil(t, b.Dream)
	require.Equal(t, []string{"memory/MEMORY.md"}, b.Dream.Files, "Dream's last commit, not the newest one")
	require.Contains(t, b.Dream.Diff, "-- likes tea\n+- likes green tea")
}
