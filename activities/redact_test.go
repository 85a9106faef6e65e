package activities

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
	"github.com/nanobot-durable/nanobot/secrets"
)

// A tool result holding a configured key is masked in the journal, so the
// next model request (what the provider sees) never carries it.
func TestToolResultReachesTheModelWithSecretsMasked(t *testing.T) {
	const key = "sk-journaled-provider-key-77"
	model := modeltest.New(modeltest.Text("done"))
	defer model.Close()
	a := newActivities(t, model)
	cfg := config.Default()
	cfg.Providers = map[string]config.ProviderConfig{"custom": {APIKey: key}}
	a.Config = func() *config.Config { return cfg }
	require.NoError(t, os.WriteFile(filepath.Join(a.Workspace, "leak.txt"), []byte("the key is "+key+"\n"), 0o600))

	ctx := context.Background()
	_, err := a.set().Turn.Build(ctx, step("t1", "read leak.txt"))
	require.NoError(t, err)
	_, err = a.Store.Append(ctx, "cli:t", chat.Message{Role: chat.RoleAssistant, Turn: "t1", EntryID: "llm-1", ToolCalls: []chat.ToolCall{
		{ID: "r1", Type: "function", Function: chat.FunctionCall{Name: "read_file", Arguments: `{"path":"leak.txt"}`}},
	}})
	require.NoError(t, err)
	env := activityEnv(a)

	val, err := env.ExecuteActivity(protocol.ActivityTool, protocol.ToolCallInput{SessionKey: "cli:t", Turn: "t1", Iteration: 1, CallID: "r1", Name: "read_file", LLMEntry: "llm-1"})
	require.NoError(t, err)
	var res protocol.ToolCallResult
	require.NoError(t, val.Get(&res))
	require.NotContains(t, res.Preview, key)
	require.Contains(t, res.Preview, "the key is "+secrets.Mask)

	sess, err := a.load(ctx, "cli:t")
	require.NoError(t, err)
	last := sess.Messages[len(sess.Messages)-1]
	require.Equal(t, chat.RoleTool, last.Role)
	require.Contains(t, last.Content, "the key is "+secrets.Mask, "the journal holds the masked text")

	in := protocol.LLMCallInput{SessionKey: "cli:t", Turn: "t1", Iteration: 2, Settings: testenv.Settings(protocol.Settings{Model: "m"})}
	_, err = env.ExecuteActivity(protocol.ActivityLLMCall, in)
	require.NoError(t, err)
	reqs := model.Requests()
	require.Len(t, reqs, 1)
	require.NotContains(t, string(reqs[0].Body), key)
	var seen bool
	for _, m := range reqs[0].Messages {
		if m.Role == chat.RoleTool && strings.Contains(m.Content, "the key is "+secrets.Mask) {
			seen = true
		}
	}
	require.True(t, seen, "the model read the masked result")
}
