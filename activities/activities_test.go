package activities

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/memory"
	"github.com/nanobot-durable/nanobot/prompt"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
	"github.com/nanobot-durable/nanobot/session"
	"github.com/nanobot-durable/nanobot/tools"
)

type fixedModel struct{ m Model }

func (f fixedModel) Model(string) (Model, error) { return f.m, nil }

// rig is a worker's dependencies over temporary files: a test changes
// them, then calls set() for the activities built from them.
type rig struct{ Deps }

func (r *rig) set() *Set { return New(r.Deps) }

func (r *rig) load(ctx context.Context, key string) (*session.Session, error) {
	return r.Store.Load(ctx, key)
}

func newActivities(t *testing.T, model *modeltest.Server) *rig {
	t.Helper()
	ws := t.TempDir()
	store, err := session.NewJSONLStore(t.TempDir(), nil)
	require.NoError(t, err)
	reg := tools.NewRegistry()
	tools.RegisterFilesystem(reg)
	a := &rig{Deps{
		Store: store, Tools: reg, Prompt: prompt.Builder{Workspace: ws}, Streams: channels.NewStreamHub(),
		Channels: channels.NewManager(), Workspace: ws, RestrictToWorkspace: true, MaxToolResultChars: 16000,
	}}
	if model != nil {
		a.Models = fixedModel{Model{Provider: providers.NewOpenAICompatible(providers.OpenAIOptions{BaseURL: model.URL()}), APIModel: "m"}}
	}
	return a
}

func activityEnv(a *rig) *testsuite.TestActivityEnvironment {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	set := a.set()
	env.RegisterActivityWithOptions(set.Model.LLMCall, activity.RegisterOptions{Name: protocol.ActivityLLMCall})
	env.RegisterActivityWithOptions(set.Tools.ToolCall, activity.RegisterOptions{Name: protocol.ActivityTool})
	return env
}

func step(turn, text string) protocol.StepInput {
	return protocol.StepInput{SessionKey: "cli:t", Turn: turn, Message: protocol.Inbound{Route: protocol.Route{Channel: "cli", ChatID: "t"}, Content: text},
		Settings: testenv.Settings(protocol.Settings{Model: "m"})}
}

func TestLLMCallReturnsJournaledReplyWithoutAskingAgain(t *testing.T) {
	model := modeltest.New(modeltest.Text("first answer"))
	defer model.Close()
	a := newActivities(t, model)
	ctx := context.Background()
	_, err := a.set().Turn.Build(ctx, step("t1", "hello"))
	require.NoError(t, err)
	env := activityEnv(a)
	in := protocol.LLMCallInput{SessionKey: "cli:t", Turn: "t1", Iteration: 1, Settings: testenv.Settings(protocol.Settings{Model: "m"})}

	val, err := env.ExecuteActivity(protocol.ActivityLLMCall, in)
	require.NoError(t, err)
	var res protocol.LLMCallResult
	require.NoError(t, val.Get(&res))
	require.Equal(t, "first answer", res.ContentPreview)
	require.False(t, res.FromJournal)

	val, err = env.ExecuteActivity(protocol.ActivityLLMCall, in)
	require.NoError(t, err)
	require.NoError(t, val.Get(&res))
	require.True(t, res.FromJournal)
	require.Equal(t, "first answer", res.ContentPreview)
	require.Equal(t, 1, model.Count(), "the retry did not call the model")
}

func TestToolCallRetryFindsResultOrReportsUnknownOutcome(t *testing.T) {
	a := newActivities(t, nil)
	ctx := context.Background()
	_, err := a.Store.Append(ctx, "cli:t",
		chat.Message{Role: chat.RoleUser, Content: "go", Turn: "t1", EntryID: "user"},
		chat.Message{Role: chat.RoleAssistant, Turn: "t1", EntryID: "llm-1", ToolCalls: []chat.ToolCall{
			{ID: "w1", Type: "function", Function: chat.FunctionCall{Name: "write_file", Arguments: `{"path":"a.txt","content":"x"}`}},
			{ID: "w2", Type: "function", Function: chat.FunctionCall{Name: "write_file", Arguments: `{"path":"b.txt","content":"y"}`}},
		}})
	require.NoError(t, err)
	env := activityEnv(a)

	val, err := env.ExecuteActivity(protocol.ActivityTool, protocol.ToolCallInput{SessionKey: "cli:t", Turn: "t1", Iteration: 1, CallID: "w1", Name: "write_file", LLMEntry: "llm-1"})
	require.NoError(t, err)
	var res protocol.ToolCallResult
	require.NoError(t, val.Get(&res))
	require.False(t, res.IsError, res.Preview)
	val, err = env.ExecuteActivity(protocol.ActivityTool, protocol.ToolCallInput{SessionKey: "cli:t", Turn: "t1", Iteration: 1, CallID: "w1", Name: "write_file", LLMEntry: "llm-1"})
	require.NoError(t, err)
	require.NoError(t, val.Get(&res))
	require.True(t, res.FromJournal)

	// A worker that claimed w2 and died before journaling: the retry must not write again.
	claimed, err := a.Store.Claim(ctx, "cli:t", "t1", "tool-w2")
	require.NoError(t, err)
	require.True(t, claimed)
	val, err = env.ExecuteActivity(protocol.ActivityTool, protocol.ToolCallInput{SessionKey: "cli:t", Turn: "t1", Iteration: 1, CallID: "w2", Name: "write_file", LLMEntry: "llm-1"})
	require.NoError(t, err)
	require.NoError(t, val.Get(&res))
	require.True(t, res.Unknown)
	require.Contains(t, res.Preview, "outcome unknown")
	_, err = os.Stat(filepath.Join(a.Workspace, "b.txt"))
	require.ErrorIs(t, err, os.ErrNotExist)

	sess, err := a.Store.Load(ctx, "cli:t")
	require.NoError(t, err)
	require.Len(t, sess.Messages, 4)
}

func TestRestoreClosesAnInterruptedTurn(t *testing.T) {
	a := newActivities(t, nil)
	ctx := context.Background()
	_, err := a.Store.Append(ctx, "cli:t",
		chat.Message{Role: chat.RoleUser, Content: "old question", Turn: "t0", EntryID: "user"},
		chat.Message{Role: chat.RoleAssistant, Turn: "t0", EntryID: "llm-1", ToolCalls: []chat.ToolCall{
			{ID: "c1", Type: "function", Function: chat.FunctionCall{Name: "read_file", Arguments: `{}`}}}})
	require.NoError(t, err)
	res, err := a.set().Turn.Restore(ctx, step("t1", "new question"))
	require.NoError(t, err)
	require.True(t, res.ClosedPending)
	sess, err := a.Store.Load(ctx, "cli:t")
	require.NoError(t, err)
	require.Len(t, sess.Messages, 4)
	require.Equal(t, InterruptedTool, sess.Messages[2].Content)
	require.Equal(t, "c1", sess.Messages[2].ToolCallID)
	require.Equal(t, InterruptedReply, sess.Messages[3].Content)

	// Restoring again (a retried local activity) adds nothing.
	res, err = a.set().Turn.Restore(ctx, step("t1", "new question"))
	require.NoError(t, err)
	require.False(t, res.ClosedPending)
}

func TestCommands(t *testing.T) {
	a := newActivities(t, nil)
	ctx := context.Background()
	cases := []struct {
		text, want string
		handled    bool
	}{
		{"hello there", "", false},
		{"/neaw", `Unknown command "/neaw". Did you mean "/new"?`, true},
		{"/status please", `Command "/status" does not accept arguments. Did you mean "/status"?`, true},
		{"/stop", "No active task to stop.", true},
		{"/help@nanobot_bot", "nanobot commands:\n/new", true},
		{"/history", "No messages in this session yet.", true},
		{"/skill", "✓ memory (built-in, always on) — ", true},
	}
	for i, tc := range cases {
		res, err := a.set().Commands.Command(ctx, step("t"+string(rune('a'+i)), tc.text))
		require.NoError(t, err)
		require.Equal(t, tc.handled, res.Handled, tc.text)
		require.Contains(t, res.Reply, tc.want, tc.text)
	}
	sess, err := a.Store.Load(ctx, "cli:t")
	require.NoError(t, err)
	for _, m := range sess.Messages {
		require.True(t, m.Command, "command rows are marked _command")
	}
	require.Empty(t, sess.History(0, nil), "command rows stay out of model history")

	res, err := a.set().Commands.Command(ctx, step("tz", "/new"))
	require.NoError(t, err)
	require.Equal(t, "New session started.", res.Reply)
	sess, err = a.Store.Load(ctx, "cli:t")
	require.NoError(t, err)
	require.Empty(t, sess.Messages, "/new clears and is not persisted")
}

func TestNewArchivesThenClears(t *testing.T) {
	a := newActivities(t, nil)
	ctx := context.Background()
	_, err := a.Store.Append(ctx, "cli:t",
		chat.Message{Role: chat.RoleUser, Content: "remember the milk", Turn: "t0", EntryID: "user"},
		chat.Message{Role: chat.RoleAssistant, Content: "noted", Turn: "t0", EntryID: "llm-1"})
	require.NoError(t, err)
	require.NoError(t, a.set().Turn.Save(ctx, protocol.SaveInput{StepInput: step("t0", ""), FinalEntry: "llm-1", StopReason: protocol.StopCompleted, PromptTokens: 120, CompletionTokens: 7}))

	res, err := a.set().Commands.Command(ctx, step("t1", "/status"))
	require.NoError(t, err)
	require.Contains(t, res.Reply, "Tokens used: 120 in, 7 out")
	require.Contains(t, res.Reply, "(2 messages, as /history lists them;", "/status and /history count the same messages")
	require.Contains(t, res.Reply, "Running task: none")

	res, err = a.set().Commands.Command(ctx, step("t2", "/new"))
	require.NoError(t, err)
	require.Equal(t, "New session started.", res.Reply)
	entries, err := memory.Read(a.Workspace)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	require.Equal(t, "[RAW] 2 messages\nUSER: remember the milk\nASSISTANT: noted", entries[0].Content)
	require.Equal(t, "cli:t", entries[0].SessionKey)
	sess, err := a.Store.Load(ctx, "cli:t")
	require.NoError(t, err)
	require.Empty(t, sess.Messages)
}

func TestModelCommandSwitchesTheSessionFromTheNextTurn(t *testing.T) {
	a := newActivities(t, nil)
	cfg := config.Default()
	cfg.ModelPresets = map[string]config.ModelPreset{"fast": {Model: "gpt-4o-mini", Provider: "openai", MaxTokens: 1000, ContextWindowTokens: 64000}}
	a.Config = func() *config.Config { return cfg }
	ctx := context.Background()

	res, err := a.set().Commands.Command(ctx, step("t1", "/model"))
	require.NoError(t, err)
	require.Contains(t, res.Reply, "Available presets: fast, default")
	res, err = a.set().Commands.Command(ctx, step("t2", "/model turbo"))
	require.NoError(t, err)
	require.Equal(t, `Unknown model preset "turbo". Available presets: fast, default`, res.Reply)
	res, err = a.set().Commands.Command(ctx, step("t3", "/model fast"))
	require.NoError(t, err)
	require.Equal(t, `Switched to model preset "fast" (gpt-4o-mini) for this session.`, res.Reply)

	restored, err := a.set().Turn.Restore(ctx, step("t4", "hello"))
	require.NoError(t, err)
	require.Equal(t, "fast", restored.Model)
	require.Equal(t, 1000, restored.MaxTokens)
	require.Equal(t, 64000, restored.ContextWindowTokens)

	_, err = a.set().Commands.Command(ctx, step("t5", "/model default"))
	require.NoError(t, err)
	restored, err = a.set().Turn.Restore(ctx, step("t6", "hello"))
	require.NoError(t, err)
	require.Empty(t, restored.Model)
}
