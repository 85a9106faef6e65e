package integration

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/providers/aimocktest"
)

// claudeBody is a Messages API request as it went over the wire.
type claudeBody struct {
	System   json.RawMessage `json:"system"`
	Tools    json.RawMessage `json:"tools"`
	Messages []struct {
		Role    string            `json:"role"`
		Content []json.RawMessage `json:"content"`
	} `json:"messages"`
}

func hasBreakpoint(b []byte) bool {
	return bytes.Contains(b, []byte(`"cache_control":{"type":"ephemeral"}`))
}

// TestAgentClaudeToolConversationKeepsCacheBreakpoints: `nanobot agent`
// with nanobot's default model, anthropic/claude-sonnet-4-5 here, talks to
// aimock's Claude Messages API over two turns that each use a tool. The
// second turn sends the system prompt and the tools byte for byte as the
// first did, with the same cache_control breakpoints, and a breakpoint on
// the history before the new message; usage is what the API reported.
func TestAgentClaudeToolConversationKeepsCacheBreakpoints(t *testing.T) {
	srv := aimocktest.Start(t, aimocktest.Fixtures(t,
		map[string]any{"match": map[string]any{"userMessage": "list my notes", "hasToolResult": false},
			"response": map[string]any{"toolCalls": []any{map[string]any{"id": "toolu_list", "name": "list_dir", "arguments": map[string]any{"path": "notes"}}},
				"usage": map[string]any{"input_tokens": 2100, "output_tokens": 21}}},
		map[string]any{"match": map[string]any{"userMessage": "list my notes", "hasToolResult": true},
			"response": map[string]any{"content": "You have one note: todo.txt.", "usage": map[string]any{"input_tokens": 2200, "output_tokens": 9}}},
		map[string]any{"match": map[string]any{"userMessage": "read the todo", "hasToolResult": false},
			"response": map[string]any{"toolCalls": []any{map[string]any{"id": "toolu_read", "name": "read_file", "arguments": map[string]any{"path": "notes/todo.txt"}}},
				"usage": map[string]any{"input_tokens": 2300, "output_tokens": 22}}},
		map[string]any{"match": map[string]any{"userMessage": "read the todo", "hasToolResult": true},
			"response": map[string]any{"content": "It says: buy milk.", "usage": map[string]any{"input_tokens": 2400, "output_tokens": 8}}},
	))
	dev := testenv.StartDevServer(t)
	home := testenv.NewHome(t, "", nil)
	writeJSON(t, home.ConfigPath, map[string]any{
		"agents": map[string]any{"defaults": map[string]any{
			"workspace": home.Workspace, "model": "anthropic/claude-sonnet-4-5", "provider": "auto", "maxTokens": 1024,
		}},
		"providers": map[string]any{"anthropic": map[string]any{"apiKey": "sk-ant-e2e", "apiBase": srv.URL() + "/v1"}},
	})
	require.NoError(t, os.MkdirAll(filepath.Join(home.Workspace, "notes"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(home.Workspace, "notes", "todo.txt"), []byte("buy milk\n"), 0o644))

	out, errOut, code := runNanobot(t, home.Env(dev.Addr), "agent", "-m", "list my notes", "-s", "cli:claude")
	require.Equal(t, 0, code, "stderr: %s", errOut)
	require.Equal(t, "↳ list_dir notes\nYou have one note: todo.txt.\n", out)
	out, errOut, code = runNanobot(t, home.Env(dev.Addr), "agent", "-m", "read the todo", "-s", "cli:claude")
	require.Equal(t, 0, code, "stderr: %s", errOut)
	require.Equal(t, "↳ read_file notes/todo.txt\nIt says: buy milk.\n", out)

	reqs := srv.Requests()
	require.Len(t, reqs, 4, "two calls per turn")
	bodies := make([]claudeBody, len(reqs))
	for i, r := range reqs {
		require.Equal(t, "/v1/messages", r.Path)
		require.Equal(t, "sk-ant-e2e", r.Header.Get("X-Api-Key"))
		r.JSON(t, &bodies[i])
		require.LessOrEqual(t, bytes.Count(r.Body, []byte(`"cache_control"`)), 4)
	}
	turn1, turn2 := bodies[0], bodies[2]
	require.True(t, hasBreakpoint(turn1.System), "the system prompt is a cache breakpoint")
	require.Equal(t, string(turn1.System), string(turn2.System), "turn 2 sends the cached system prompt byte for byte")
	var tools []json.RawMessage
	require.NoError(t, json.Unmarshal(turn2.Tools, &tools))
	require.True(t, hasBreakpoint(tools[len(tools)-1]), "the last tool is a breakpoint")
	require.Equal(t, string(turn1.Tools), string(turn2.Tools), "and the tools too")
	for i := range bodies {
		require.Equal(t, string(turn1.System), string(bodies[i].System), "call %d", i)
		require.Equal(t, string(turn1.Tools), string(bodies[i].Tools), "call %d", i)
	}

	// Turn 2's first call: turn 1 replayed (user, call, result, answer), then
	// the new message with its runtime context after the last breakpoint.
	require.Len(t, turn2.Messages, 5)
	require.Equal(t, "assistant", turn2.Messages[3].Role)
	answer := turn2.Messages[3].Content
	require.True(t, hasBreakpoint(answer[len(answer)-1]), "the last stable history block: %s", answer[len(answer)-1])
	newest := turn2.Messages[4].Content
	require.False(t, hasBreakpoint(newest[len(newest)-1]))
	require.Contains(t, string(newest[len(newest)-1]), "Runtime Context")
	for i, m := range turn2.Messages[:4] {
		for _, b := range m.Content {
			require.NotContains(t, string(b), "Runtime Context", "message %d is history without the old runtime context", i)
		}
	}
	var first map[string]any
	require.NoError(t, json.Unmarshal(turn2.Messages[1].Content[0], &first))
	require.Equal(t, "tool_use", first["type"])
	require.Equal(t, "toolu_list", first["id"], "turn 1's call replays with its id")

	// Usage records are the API's numbers, not a local count.
	var prompts []int
	for _, rec := range usageRecords(t, home) {
		require.Equal(t, "anthropic", rec.Provider)
		require.False(t, rec.Estimated)
		require.True(t, strings.HasPrefix(rec.Model, "anthropic/claude-sonnet-4-5"), rec.Model)
		prompts = append(prompts, rec.Prompt)
	}
	require.Equal(t, []int{2100, 2200, 2300, 2400}, prompts)
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, b, 0o600))
}
