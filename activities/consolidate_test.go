package activities

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/memory"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
	"github.com/nanobot-durable/nanobot/session"
)

// chatSession journals n user/assistant exchanges of about 120 tokens each.
func chatSession(t *testing.T, a *rig, key string, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		turn := fmt.Sprintf("t%d", i)
		_, err := a.Store.Append(context.Background(), key,
			chat.Message{Role: chat.RoleUser, Content: fmt.Sprintf("question %d: %s", i, strings.Repeat("tell me about the mountains and rivers of Yunnan. ", 6)), Turn: turn, EntryID: "user"},
			chat.Message{Role: chat.RoleAssistant, Content: fmt.Sprintf("answer %d: %s", i, strings.Repeat("the rivers run south through deep gorges. ", 6)), Turn: turn, EntryID: "final"})
		require.NoError(t, err)
	}
}

func consolidateIn(reason string, round, target int) protocol.ConsolidateInput {
	return protocol.ConsolidateInput{SessionKey: "cli:t", Turn: "run-1", Reason: reason, Round: round, Target: target,
		Settings: testenv.Settings(protocol.Settings{Model: "m", ContextWindowTokens: 8000, MaxTokens: 1024})}
}

func TestConsolidateArchivesWholeTurnsWithTheModelsSummary(t *testing.T) {
	model := modeltest.New(modeltest.Text("The user asked about Yunnan's rivers; they run south through gorges."))
	defer model.Close()
	a := newActivities(t, model)
	chatSession(t, a, "cli:t", 30)
	before, err := a.load(context.Background(), "cli:t")
	require.NoError(t, err)
	size, err := a.set().Memory.prompts.tokens(context.Background(), protocol.StepInput{SessionKey: "cli:t", Settings: consolidateIn("", 0, 0).Settings}, before, "")
	require.NoError(t, err)

	res, err := a.set().Memory.Consolidate(context.Background(), consolidateIn(protocol.ConsolidateBudget, 1, size-1500))
	require.NoError(t, err)
	require.False(t, res.Raw)
	require.Positive(t, res.Archived)
	require.Zero(t, res.Archived%2, "whole user turns")
	require.LessOrEqual(t, res.PromptTokens, size-1500)

	req := model.Requests()[0]
	require.Empty(t, req.Tools, "the summary is asked for with tools off")
	require.Equal(t, ConsolidationPrompt, req.Messages[0].Content)
	require.Contains(t, req.Messages[1].Content, "USER: question 0:")
	require.NotContains(t, req.Messages[1].Content, "question 29:")

	entries, err := memory.Read(a.Workspace)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	require.Equal(t, "cli:t", entries[0].SessionKey)
	require.Contains(t, entries[0].Content, "Yunnan's rivers")
	sess, err := a.load(context.Background(), "cli:t")
	require.NoError(t, err)
	require.Equal(t, res.Archived, sess.LastConsolidated)
	text, cursor := lastSummary(sess)
	require.Equal(t, entries[0].Content, text)
	require.Equal(t, entries[0].Cursor, cursor)

	// The next turn's prompt carries it.
	system, err := a.set().Turn.prompts.system(step("t99", "next"), sess)
	require.NoError(t, err)
	require.Contains(t, system, "[Archived Context Summary]\n\nThe user asked about Yunnan's rivers")
}

func TestConsolidateFallsBackToRaw(t *testing.T) {
	for name, reply := range map[string]modeltest.Step{
		"server error": modeltest.Error(500, "", "boom"),
		"cut off":      modeltest.Text("The user asked").Finish("length"),
		"tool calls":   modeltest.ToolCalls(modeltest.Call{ID: "c", Name: "read_file", Args: `{}`}),
		"empty":        modeltest.Text(""),
	} {
		t.Run(name, func(t *testing.T) {
			model := modeltest.New(reply)
			defer model.Close()
			a := newActivities(t, model)
			chatSession(t, a, "cli:t", 4)
			res, err := a.set().Memory.Consolidate(context.Background(), consolidateIn(protocol.ConsolidateNew, 1, 0))
			require.NoError(t, err, "a model failure is not an activity failure")
			require.True(t, res.Raw)
			require.Equal(t, 8, res.Archived)
			entries, err := memory.Read(a.Workspace)
			require.NoError(t, err)
			require.Len(t, entries, 1)
			require.True(t, strings.HasPrefix(entries[0].Content, "[RAW] 8 messages\nUSER: question 0:"), entries[0].Content)
		})
	}
}

func TestNothingIsNotStoredButTheCursorMoves(t *testing.T) {
	model := modeltest.New(modeltest.Text("(nothing)"))
	defer model.Close()
	a := newActivities(t, model)
	chatSession(t, a, "cli:t", 3)
	res, err := a.set().Memory.Consolidate(context.Background(), consolidateIn(protocol.ConsolidateNew, 1, 0))
	require.NoError(t, err)
	require.True(t, res.Nothing)
	entries, err := memory.Read(a.Workspace)
	require.NoError(t, err)
	require.Empty(t, entries)
	sess, err := a.load(context.Background(), "cli:t")
	require.NoError(t, err)
	require.Equal(t, 6, sess.LastConsolidated)
}

// failingStore fails the Nth Update, as a worker killed mid-activity would.
type failingStore struct {
	session.Store
	updates, failAt int
}

func (f *failingStore) Update(ctx context.Context, key string, fn func(*session.Session) error) error {
	f.updates++
	if f.updates == f.failAt {
		return errors.New("worker died")
	}
	return f.Store.Update(ctx, key, fn)
}

func TestARetriedRoundArchivesOnce(t *testing.T) {
	model := modeltest.New(modeltest.Text("first attempt's summary"), modeltest.Text("a retry must not ask again"))
	defer model.Close()
	a := newActivities(t, model)
	chatSession(t, a, "cli:t", 6)
	a.Store = &failingStore{Store: a.Store, failAt: 2} // dies after appending to history, before last_consolidated moves
	in := consolidateIn(protocol.ConsolidateIdle, 1, 0)

	_, err := a.set().Memory.Consolidate(context.Background(), in)
	require.Error(t, err)
	res, err := a.set().Memory.Consolidate(context.Background(), in) // Temporal's retry
	require.NoError(t, err)
	again, err := a.set().Memory.Consolidate(context.Background(), in) // and one after it completed
	require.NoError(t, err)

	require.Equal(t, 1, model.Count(), "the model is asked once")
	entries, err := memory.Read(a.Workspace)
	require.NoError(t, err)
	require.Len(t, entries, 1, "archived once")
	require.Equal(t, "first attempt's summary", entries[0].Content)
	require.Equal(t, entries[0].Cursor, res.Cursor)
	require.Equal(t, res.PromptTokens, again.PromptTokens)
	sess, err := a.load(context.Background(), "cli:t")
	require.NoError(t, err)
	require.Equal(t, 12-protocol.IdleKeepMessages, sess.LastConsolidated, "idle compaction keeps the last 8")
	require.NotContains(t, sess.Metadata, pendingKey)
}

func TestNewRefusesToClearWhenArchivingFails(t *testing.T) {
	a := newActivities(t, nil)
	chatSession(t, a, "cli:t", 2)
	require.NoError(t, writeFile(memory.Dir(a.Workspace), "not a directory")) // history.jsonl cannot be written
	res, err := a.set().Commands.Command(context.Background(), step("tn", "/new"))
	require.NoError(t, err)
	require.Equal(t, ArchiveFailedReply, res.Reply)
	sess, err := a.load(context.Background(), "cli:t")
	require.NoError(t, err)
	require.Len(t, archivable(sess.Messages), 4, "the conversation is kept")
}

func writeFile(path, text string) error { return os.WriteFile(path, []byte(text), 0o644) }

// Idle compaction finds a session by its kind, not its key: a Dream
// session (marked by its first BUILD) is never compacted, whatever its name.
func TestIdleSessionsLeaveDreamSessionsAlone(t *testing.T) {
	a := newActivities(t, nil)
	ctx := context.Background()
	for _, key := range []string{"cli:idle", "cli:dreamlike"} {
		chatSession(t, a, key, 10)
	}
	sess, err := a.Store.Load(ctx, "cli:dreamlike")
	require.NoError(t, err)
	require.NoError(t, a.set().Turn.markSessionKind(ctx, sess, protocol.DreamTurn))
	past := time.Now().Add(-time.Hour)
	for _, key := range []string{"cli:idle", "cli:dreamlike"} {
		require.NoError(t, os.Chtimes(a.Store.Path(key), past, past))
	}
	res, err := a.set().Memory.IdleSessions(ctx, protocol.IdleCompactInput{})
	require.NoError(t, err)
	require.Equal(t, []string{"cli:idle"}, res.Sessions)
}
