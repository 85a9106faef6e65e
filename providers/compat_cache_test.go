package providers_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/providers"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// TestOpenRouterMarksClaudeRequestsForCaching: OpenRouter passes
// cache_control on to Anthropic, so requests for Claude models carry
// nanobot's breakpoints in the chat-completions shape; others do not.
func TestOpenRouterMarksClaudeRequestsForCaching(t *testing.T) {
	history := []chat.Message{
		{Role: chat.RoleSystem, Content: "stable system prompt"},
		{Role: chat.RoleUser, Content: "first"},
		{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{{ID: "c1", Type: "function", Function: chat.FunctionCall{Name: "read_file", Arguments: `{}`}}}},
		{Role: chat.RoleTool, ToolCallID: "c1", Content: "file text"},
		{Role: chat.RoleAssistant, Content: "answer"},
		{Role: chat.RoleUser, Content: "second"},
	}
	schema := json.RawMessage(`{"type":"object","properties":{}}`)
	tools := []chat.ToolDefinition{{Name: "read_file", Parameters: schema}, {Name: "write_file", Parameters: schema}, {Name: "mcp_x_y", Parameters: schema}}
	call := func(model string) map[string]json.RawMessage {
		srv := newServer(t, modeltest.Text("ok"))
		cfg := testConfig(map[string]config.ProviderConfig{"openrouter": {APIKey: "sk-or-test", APIBase: srv.URL()}})
		cfg.Agents.Defaults.Model, cfg.Agents.Defaults.Provider = model, "openrouter"
		m, err := (&providers.Factory{Getenv: noEnv}).Model(cfg, "")
		require.NoError(t, err)
		_, err = m.Provider.Chat(testContext(t), providers.Request{Messages: history, Tools: tools}, nil)
		require.NoError(t, err)
		return srv.Requests()[0].Fields
	}

	fields := call("anthropic/claude-sonnet-4.5")
	var msgs []map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(fields["messages"], &msgs))
	require.Len(t, msgs, 6)
	require.JSONEq(t, `[{"type":"text","text":"stable system prompt","cache_control":{"type":"ephemeral"}}]`, string(msgs[0]["content"]))
	require.JSONEq(t, `[{"type":"text","text":"answer","cache_control":{"type":"ephemeral"}}]`, string(msgs[4]["content"]))
	require.JSONEq(t, `"second"`, string(msgs[5]["content"]), "the newest message is not marked")
	require.JSONEq(t, `"file text"`, string(msgs[3]["content"]))
	require.Contains(t, string(msgs[2]["tool_calls"]), `"read_file"`, "the rest of a message is kept")
	var tl []map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(fields["tools"], &tl))
	require.NotContains(t, tl[0], "cache_control")
	require.JSONEq(t, `{"type":"ephemeral"}`, string(tl[1]["cache_control"]), "the last built-in tool")
	require.JSONEq(t, `{"type":"ephemeral"}`, string(tl[2]["cache_control"]), "the last tool")
	require.Contains(t, string(tl[2]["function"]), `"mcp_x_y"`)

	fields = call("openai/gpt-4.1")
	require.NotContains(t, string(fields["messages"]), "cache_control", "only Claude models are marked")
	require.NotContains(t, string(fields["tools"]), "cache_control")
}
