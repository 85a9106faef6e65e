package mcp

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/tools"
)

// checkEverythingExtras checks server-everything's resources and prompts as
// the model sees them: registered tools under nanobot's names and texts.
func checkEverythingExtras(t *testing.T, reg *tools.Registry) {
	t.Helper()
	ctx := context.Background()
	run := func(name, args string) tools.Result { return reg.Execute(ctx, tools.Env{}, name, args) }

	res, ok := reg.Get("mcp_everything_resource_architecture_md")
	require.True(t, ok, "a resource is a tool named mcp_<server>_resource_<name>: %v", reg.Names())
	require.Equal(t, "[MCP Resource] Static document file exposed from /docs: architecture.md\nURI: demo://resource/static/document/architecture.md", res.Description())
	require.JSONEq(t, `{"type":"object","properties":{},"required":[]}`, string(res.Parameters()))
	require.Equal(t, tools.Flags{ReadOnly: true}, res.Flags())
	got := run("mcp_everything_resource_architecture_md", `{}`)
	require.False(t, got.IsError, got.Text)
	require.Contains(t, got.Text, "# Everything Server – Architecture")

	pr, ok := reg.Get("mcp_everything_prompt_args-prompt")
	require.True(t, ok, "a prompt is a tool named mcp_<server>_prompt_<name>: %v", reg.Names())
	require.Equal(t, "[MCP Prompt] A prompt with two arguments, one required and one optional\nReturns a filled prompt template that can be used as a workflow guide.", pr.Description())
	require.JSONEq(t, `{"type":"object","properties":{"city":{"type":"string","description":"Name of the city"},"state":{"type":"string"}},"required":["city"]}`, string(pr.Parameters()))
	require.Equal(t, tools.Flags{ReadOnly: true}, pr.Flags())
	require.Equal(t, tools.Result{Text: "What's weather in Paris?"}, run("mcp_everything_prompt_args-prompt", `{"city":"Paris"}`))
	require.Equal(t, tools.Result{Text: "This is a simple prompt without arguments."}, run("mcp_everything_prompt_simple-prompt", `{}`))
	require.True(t, run("mcp_everything_prompt_args-prompt", `{}`).IsError, "a required argument is required")

	// An embedded resource in a prompt message is rendered, not dropped.
	got = run("mcp_everything_prompt_resource-prompt", `{"resourceType":"Text","resourceId":"1"}`)
	require.False(t, got.IsError, got.Text)
	require.Contains(t, got.Text, "This prompt includes the Text resource with id: 1.")
	require.Contains(t, got.Text, "[resource: demo://resource/dynamic/text/1]\nResource 1: This is a plaintext resource")

	// The server's refusal is an error result for the model, with its message.
	got = run("mcp_everything_prompt_resource-prompt", `{"resourceType":"Nope","resourceId":"1"}`)
	require.True(t, got.IsError)
	require.Contains(t, got.Text, "Error: MCP prompt 'resource-prompt' failed:")
	require.Contains(t, got.Text, "Invalid resourceType: Nope")
}

// A restricted enabledTools means "only these tools", as in nanobot: the
// server's resources and prompts stay out.
func TestE2EEverythingExtrasNeedAllTools(t *testing.T) {
	bin := e2eBin(t, "mcp-server-everything")
	p := NewPool(map[string]config.MCPServer{"everything": {Command: bin, Args: []string{"stdio"}, EnabledTools: []string{"echo"}}}, slog.New(&captureHandler{}))
	defer p.Close()
	ts := byName(t, p)
	require.Len(t, ts, 1, "only echo: %v", ts)
	require.Contains(t, ts, "mcp_everything_echo")
}

// A resource that has gone from the server is an error result, not a failed turn.
func TestE2EEverythingResourceGone(t *testing.T) {
	bin := e2eBin(t, "mcp-server-everything")
	p := NewPool(map[string]config.MCPServer{"everything": {Command: bin, Args: []string{"stdio"}}}, nil)
	defer p.Close()
	gone := newResourceTool(p, "everything", "mcp_everything_resource_gone", mcpResource("gone", "demo://resource/static/document/gone.md"))
	got := gone.Run(context.Background(), tools.Env{}, nil)
	require.True(t, got.IsError, got.Text)
	require.Contains(t, got.Text, "Error: MCP resource 'demo://resource/static/document/gone.md' failed:")
}

func mcpResource(name, uri string) mcpgo.Resource { return mcpgo.Resource{Name: name, URI: uri} }

// Like nanobot, only the first page of resources becomes tools; a server
// with resources and no tools is not asked for tools.
func TestResourcesFirstPageOnly(t *testing.T) {
	s := mcpserver.NewMCPServer("pager", "1.0.0", mcpserver.WithResourceCapabilities(false, false), mcpserver.WithPaginationLimit(2))
	for _, n := range []string{"a", "b", "c"} {
		s.AddResource(mcpgo.NewResource("demo://"+n, n), func(_ context.Context, r mcpgo.ReadResourceRequest) ([]mcpgo.ResourceContents, error) {
			return []mcpgo.ResourceContents{mcpgo.TextResourceContents{URI: r.Params.URI, Text: "text of " + n}}, nil
		})
	}
	srv := httptest.NewServer(mcpserver.NewStreamableHTTPServer(s))
	defer srv.Close()
	p := NewPool(map[string]config.MCPServer{"pager": {URL: srv.URL + "/mcp"}}, nil)
	defer p.Close()
	ts := byName(t, p)
	require.Len(t, ts, 2, "%v", ts)
	require.Equal(t, tools.Result{Text: "text of a"}, ts["mcp_pager_resource_a"].Run(context.Background(), tools.Env{}, nil))
}
