package integration

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/internal/peer"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// mcpBin finds an npm-installed MCP server in e2e/node_modules (make e2e).
func mcpBin(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join(testenv.RepoRoot(t), "e2e", "node_modules", ".bin", name)
	if _, err := os.Stat(p); err != nil {
		peer.Missing(t, peer.MCPServers, "e2e/node_modules/.bin/"+name+" is not installed: install Node.js and npm, then run make e2e (e2e/install.sh)")
	}
	peer.Used(t, peer.MCPServers)
	return p
}

// TestToolsAndMCPEndToEnd: one turn reads, edits and greps files, runs a
// command, reads a resource and renders a prompt, and calls tools of two real MCP servers (npm's server-everything
// and server-filesystem over stdio) through the real worker and dev server.
func TestToolsAndMCPEndToEnd(t *testing.T) {
	everything, filesystem := mcpBin(t, "mcp-server-everything"), mcpBin(t, "mcp-server-filesystem")
	dev := testenv.StartDevServer(t)
	model := modeltest.New()
	defer model.Close()
	home := testenv.NewHome(t, model.URL(), nil)
	ws := home.Workspace
	cfg, err := json.Marshal(map[string]any{
		"agents":    map[string]any{"defaults": map[string]any{"workspace": ws, "model": "test-model", "provider": "custom"}},
		"providers": map[string]any{"custom": map[string]any{"apiKey": "k", "apiBase": model.URL()}},
		"tools": map[string]any{"mcpServers": map[string]any{
			"everything": map[string]any{"command": everything, "args": []string{"stdio"}},
			"filesystem": map[string]any{"command": filesystem, "args": []string{ws}},
		}},
	})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(home.ConfigPath, cfg, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "notes.md"), []byte("# Notes\nstatus: draft\nowner: cat\n"), 0o644))
	startWorker(t, home.Env(dev.Addr))

	call := func(id, name, args string) modeltest.Call { return modeltest.Call{ID: id, Name: name, Args: args} }
	model.Script(
		modeltest.ToolCalls(call("r", "read_file", `{"path":"notes.md"}`)),
		modeltest.ToolCalls(call("e", "edit_file", `{"path":"notes.md","old_text":"status: draft","new_text":"status: final"}`)),
		modeltest.ToolCalls(call("g", "grep", `{"pattern":"status: \\w+","path":"."}`)),
		modeltest.ToolCalls(call("x", "exec", `{"command":"wc -l notes.md"}`)),
		modeltest.ToolCalls(call("m1", "mcp_everything_echo", `{"message":"hello over MCP"}`)),
		modeltest.ToolCalls(call("m2", "mcp_filesystem_read_text_file", `{"path":"`+filepath.Join(ws, "notes.md")+`"}`)),
		modeltest.ToolCalls(call("m3", "mcp_everything_resource_architecture_md", `{}`)),
		modeltest.ToolCalls(call("m4", "mcp_everything_prompt_args-prompt", `{"city":"Paris"}`)),
		modeltest.Text("All done: notes.md is final."),
	)
	bus := &channels.Bus{Client: dev.Client, Settings: testenv.Settings(protocol.Settings{Model: "test-model"})}
	_, err = bus.Publish(context.Background(), protocol.Inbound{ID: "e2e", SessionKey: "cli:e2e", Route: protocol.Route{Channel: "cli", ChatID: "e2e"}, Content: "finish my notes"})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var res protocol.TurnResult
	require.NoError(t, dev.Client.GetWorkflow(ctx, "turn/cli:e2e", "").Get(ctx, &res))
	require.Equal(t, protocol.StopCompleted, res.StopReason)
	require.Equal(t, "All done: notes.md is final.", res.ReplyPreview)

	offered := map[string]bool{}
	for _, d := range model.Requests()[0].Tools {
		offered[d.Name] = true
	}
	for _, name := range []string{"read_file", "edit_file", "grep", "exec", "mcp_everything_echo", "mcp_filesystem_read_text_file",
		"mcp_everything_resource_architecture_md", "mcp_everything_prompt_args-prompt"} {
		require.True(t, offered[name], "tool %s offered to the model", name)
	}
	_, msgs := sessionLines(t, home, "cli:e2e")
	results := map[string]string{}
	for _, m := range msgs {
		if m.Role == chat.RoleTool {
			results[m.ToolCallID] = m.Content
		}
	}
	require.Contains(t, results["r"], "status: draft")
	require.NotContains(t, results["e"], "Error")
	require.Contains(t, results["g"], "status: final")
	require.Contains(t, results["x"], "3 notes.md")
	require.Contains(t, results["m1"], "hello over MCP")
	require.Contains(t, results["m2"], "status: final")
	require.Contains(t, results["m3"], "# Everything Server – Architecture", "a resource read through the worker")
	require.Equal(t, "What's weather in Paris?", results["m4"], "a prompt rendered through the worker")
	data, err := os.ReadFile(filepath.Join(ws, "notes.md"))
	require.NoError(t, err)
	require.True(t, strings.Contains(string(data), "status: final"))
}
