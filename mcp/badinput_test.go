package mcp

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/tools"
)

// The bad-input corpus for MCP: replies no well-behaved server sends
// (broken JSON-RPC, wrong ids, missing or mistyped results, huge and
// non-UTF-8 results, unknown content), tool listings with broken schemas,
// and servers that die mid-call. Each call gives the model a clear error
// text result (or the readable part of the reply), never a panic, and the
// pool works for the next call.

// rawStdio is the test binary as a raw stdio server in a tools/list mode.
func rawStdio(t *testing.T, mode string) config.MCPServer {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	return config.MCPServer{Command: exe, Env: map[string]string{rawServerEnv: mode}, EnabledTools: []string{"*"}, ToolTimeout: 2}
}

// rawHTTP is the raw server over streamable HTTP on 127.0.0.1.
func rawHTTP(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(rawHTTPHandler))
	t.Cleanup(srv.Close)
	return srv
}

func TestBadInputMCPReplies(t *testing.T) {
	timedOut := "Error: MCP tool call timed out after 2s"
	cases := []struct {
		tool        string
		stdio, http string // what the result text contains
		ok          bool   // not an error result
		httpOK      bool   // not an error result over HTTP
	}{
		{tool: "bad_json", stdio: timedOut, http: "Error: MCP server 'raw' failed: transport error: failed to decode response"},
		{tool: "not_json", stdio: timedOut, http: "Error: MCP server 'raw' failed: transport error: failed to decode response"},
		// Over HTTP the body of the POST is the answer, whatever id it names.
		{tool: "wrong_id", stdio: timedOut, http: "for someone else", httpOK: true},
		{tool: "no_result", stdio: "Error: MCP server 'raw' sent a reply to tool 'no_result' that cannot be read: unexpected end of JSON input"},
		{tool: "null_result", stdio: "Error: MCP tool 'null_result' failed: content is missing"},
		{tool: "result_is_string", stdio: "Error: MCP server 'raw' sent a reply to tool 'result_is_string' that cannot be read: the reply is a JSON string"},
		{tool: "rpc_error", stdio: "Error: MCP tool 'rpc_error' failed: internal error: kaput"},
		{tool: "error_and_result", stdio: "Error: MCP tool 'error_and_result' failed: internal error: both"},
		{tool: "huge", stdio: "xxxxxxxx", ok: true},
		{tool: "non_utf8", stdio: "bad \uFFFD\uFFFD bytes", ok: true},
		{tool: "unknown_content", stdio: "Error: MCP server 'raw' sent a reply to tool 'unknown_content' that cannot be read: unknown content type: hologram"},
		{tool: "content_not_array", stdio: "Error: MCP server 'raw' sent a reply to tool 'content_not_array' that cannot be read: content is a JSON string"},
		{tool: "content_missing", stdio: "Error: MCP tool 'content_missing' failed: content is missing"},
		{tool: "image_without_data", stdio: "[image: unknown type, 0 bytes]", ok: true},
		{tool: "die", stdio: "raw server: dying mid-call on purpose", http: "Error: MCP server 'raw' failed: transport error:"},
		{tool: "die_midline", stdio: "raw server: dying mid-call on purpose", http: "Error: MCP server 'raw' failed: transport error: failed to decode response"},
		{tool: "server_request", stdio: "asked", ok: true},
		{tool: "notification_flood", stdio: "flooded", ok: true},
	}
	srv := rawHTTP(t)
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			cfg := rawStdio(t, "tools")
			if transport == "http" {
				cfg = config.MCPServer{URL: srv.URL + "/mcp/tools", EnabledTools: []string{"*"}, ToolTimeout: 2}
			}
			p := NewPool(map[string]config.MCPServer{"raw": cfg}, nil)
			t.Cleanup(p.Close)
			for _, c := range cases {
				want, ok := c.stdio, c.ok
				if transport == "http" && c.http != "" {
					want, ok = c.http, c.ok || c.httpOK
				}
				res := callTool(t, p, ToolName("raw", c.tool), nil)
				require.Equal(t, !ok, res.IsError, "%s: %.300s", c.tool, res.Text)
				require.Contains(t, res.Text, want, c.tool)
				require.True(t, utf8.ValidString(res.Text), "%s: the model gets UTF-8", c.tool)
				if c.tool == "huge" {
					require.Len(t, res.Text, hugeText, "the whole result; the tool-result budget cuts it later")
				}
				require.Equal(t, tools.Result{Text: "echo: after " + c.tool}, callTool(t, p, "mcp_raw_echo", map[string]any{"message": "after " + c.tool}),
					"the pool works after %s", c.tool)
			}
		})
	}
}

func TestBadInputMCPToolListings(t *testing.T) {
	srv := rawHTTP(t)
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			schemas, garbage := rawStdio(t, "schemas"), rawStdio(t, "garbage")
			if transport == "http" {
				schemas = config.MCPServer{URL: srv.URL + "/mcp/schemas", EnabledTools: []string{"*"}}
				garbage = config.MCPServer{URL: srv.URL + "/mcp/garbage", EnabledTools: []string{"*"}}
			}
			p := NewPool(map[string]config.MCPServer{"raw": schemas, "junk": garbage, "good": selfServer(t)}, nil)
			t.Cleanup(p.Close)
			reg := tools.NewRegistry()
			errs := p.Register(context.Background(), reg)
			var msgs []string
			for _, err := range errs {
				msgs = append(msgs, err.Error())
			}
			all := strings.Join(msgs, "\n")
			for _, want := range []string{
				`mcp server "junk": list tools: tools/list result is not a list of tools: tools is a JSON string`,
				`mcp server "raw": 4 tool definition(s) skipped: tool "schema_string": inputSchema is a JSON string; ` +
					`tool "schema_number_type": inputSchema.type is a JSON number; tool "props_not_object": inputSchema is a JSON string; ` +
					`tool "required_not_list": inputSchema.required is a JSON string`,
				`mcp server "raw": a tool without a name was skipped`,
				`mcp server "raw": tool "schema_array_type": inputSchema type is "array", want "object"`,
				`tool "mcp_raw_bad_ref": compile schema`,
			} {
				require.Contains(t, all, want)
			}
			names := reg.Names()
			for _, want := range []string{"mcp_raw_echo", "mcp_raw_no_schema", "mcp_raw_schema_null", "mcp_raw_spaces_and_n_c_d_", "mcp_good_echo"} {
				require.Contains(t, names, want, "the readable tools are offered")
			}
			for _, name := range names {
				require.NotEqual(t, "mcp_raw_", name, "no tool without a name")
				require.NotContains(t, name, "schema_string")
				require.NotContains(t, name, "bad_ref")
				require.NotContains(t, name, "junk")
				require.LessOrEqual(t, len(name), MaxToolNameLen)
			}
			require.Equal(t, "echo: hi", reg.Execute(context.Background(), tools.Env{}, "mcp_raw_echo", `{"message":"hi"}`).Text,
				"a server with broken definitions still runs its good tools")
			require.Equal(t, "echo: hi", reg.Execute(context.Background(), tools.Env{}, "mcp_good_echo", `{"message":"hi"}`).Text,
				"the other servers are untouched")
		})
	}
}

// TestBadInputMCPHTTPServerRestarted: an HTTP server that goes away gives
// an error result; once it is back on its address, calls work again.
func TestBadInputMCPHTTPServerRestarted(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(rawHTTPHandler))
	addr := srv.Listener.Addr().String()
	p := NewPool(map[string]config.MCPServer{"raw": {URL: srv.URL + "/mcp/tools", EnabledTools: []string{"*"}}}, nil)
	t.Cleanup(p.Close)
	p.backoff = 50 * time.Millisecond
	ts, errs := p.Tools(context.Background())
	require.Empty(t, errs)
	var echo tools.Tool
	for _, tool := range ts {
		if tool.Name() == "mcp_raw_echo" {
			echo = tool
		}
	}
	require.NotNil(t, echo)
	run := func() tools.Result {
		return echo.Run(context.Background(), tools.Env{}, map[string]any{"message": "x"})
	}
	require.Equal(t, "echo: x", run().Text)

	srv.Close()
	down := run()
	require.True(t, down.IsError)
	require.Contains(t, down.Text, "Error: MCP server 'raw' failed: transport error:")
	down = run()
	require.True(t, down.IsError)
	require.Contains(t, down.Text, "Error: MCP server 'raw' is unavailable:", "reconnecting fails while it is down")

	ln, err := net.Listen("tcp", addr)
	require.NoError(t, err)
	back := httptest.NewUnstartedServer(http.HandlerFunc(rawHTTPHandler))
	back.Listener = ln
	back.Start()
	t.Cleanup(back.Close)
	require.Eventually(t, func() bool { return run().Text == "echo: x" }, 10*time.Second, 100*time.Millisecond, "the restarted server answers")
}
