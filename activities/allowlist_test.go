package activities

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// A subagent's allow-list: the model is offered only those tools, a call to
// any other is refused as a tool error, and paths stay in the workspace.
func TestToolAllowList(t *testing.T) {
	model := modeltest.New(modeltest.Text("ok"))
	defer model.Close()
	a := newActivities(t, model)
	a.RestrictToWorkspace = false
	ctx := context.Background()
	_, err := a.Build(ctx, step("t1", "hello"))
	require.NoError(t, err)
	env := activityEnv(a)
	allow := []string{"read_file", "list_*"}
	_, err = env.ExecuteActivity(protocol.ActivityLLMCall, protocol.LLMCallInput{SessionKey: "cli:t", Turn: "t1", Call: 1, Iteration: 1,
		Settings: protocol.Settings{Model: "m"}.WithDefaults(), Tools: allow})
	require.NoError(t, err)
	var offered []string
	for _, d := range model.Requests()[0].Tools {
		offered = append(offered, d.Name)
	}
	require.ElementsMatch(t, []string{"read_file", "list_dir"}, offered)

	outside := filepath.Join(t.TempDir(), "secret.txt")
	require.NoError(t, os.WriteFile(outside, []byte("s"), 0o600))
	_, err = a.Store.Append(ctx, "cli:t", chat.Message{Role: chat.RoleAssistant, Turn: "t1", EntryID: "llm-2", ToolCalls: []chat.ToolCall{
		{ID: "w", Type: "function", Function: chat.FunctionCall{Name: "write_file", Arguments: `{"path":"a.txt","content":"x"}`}},
		{ID: "r", Type: "function", Function: chat.FunctionCall{Name: "read_file", Arguments: `{"path":"` + outside + `"}`}},
	}})
	require.NoError(t, err)
	var res protocol.ToolCallResult
	val, err := env.ExecuteActivity(protocol.ActivityTool, protocol.ToolCallInput{SessionKey: "cli:t", Turn: "t1", CallID: "w", Name: "write_file", LLMEntry: "llm-2", Tools: allow})
	require.NoError(t, err)
	require.NoError(t, val.Get(&res))
	require.True(t, res.IsError)
	require.Contains(t, res.Preview, "Error: Tool 'write_file' is not available here")
	require.NoFileExists(t, filepath.Join(a.Workspace, "a.txt"))

	val, err = env.ExecuteActivity(protocol.ActivityTool, protocol.ToolCallInput{SessionKey: "cli:t", Turn: "t1", CallID: "r", Name: "read_file", LLMEntry: "llm-2", Tools: allow})
	require.NoError(t, err)
	require.NoError(t, val.Get(&res))
	require.True(t, res.IsError, "an allow-listed run is confined to the workspace: %s", res.Preview)
	require.NotContains(t, res.Preview, "s\n")
}
