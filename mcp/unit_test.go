package mcp

import (
	"context"
	"crypto/sha1" //nolint:gosec // checks the nanobot-compatible name suffix
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/tools"
)

func TestToolName(t *testing.T) {
	require.Equal(t, "mcp_fs_read_file", ToolName("fs", "read_file"))
	require.Equal(t, "mcp_my_server_a_b_c-d", ToolName("my server", "a.b/c-d"))
	require.Equal(t, "mcp_x_y", ToolName("x", "__y"), "runs of _ collapse")
	require.Equal(t, "mcp_s_get-sum", ToolName("s", "get-sum"))

	long := ToolName("server", strings.Repeat("t", 80))
	full := "mcp_server_" + strings.Repeat("t", 80)
	sum := sha1.Sum([]byte(full)) //nolint:gosec // see import
	require.Len(t, long, MaxToolNameLen)
	require.Equal(t, full[:55]+"_"+hex.EncodeToString(sum[:])[:8], long, "same scheme as nanobot")

	other := ToolName("server", strings.Repeat("t", 79)+"u")
	require.Len(t, other, MaxToolNameLen)
	require.NotEqual(t, long, other, "long names sharing a prefix stay distinct")
	require.Len(t, ToolName("s", strings.Repeat("x", 64-6)), 64, "exactly 64 is kept")
}

func TestWrapCollisions(t *testing.T) {
	p := NewPool(map[string]config.MCPServer{"a": {}, "a_b": {}, "s": {}}, nil)
	defer p.Close()
	listed := map[string]listing{
		"a_b": {tools: []mcpgo.Tool{{Name: "c"}}},
		"a":   {tools: []mcpgo.Tool{{Name: "b_c"}}},
		"s": {
			tools:     []mcpgo.Tool{{Name: "x_y"}, {Name: "x.y"}, {Name: strings.Repeat("l", 70) + "1"}, {Name: strings.Repeat("l", 70) + "2"}, {Name: "resource_r"}},
			resources: []mcpgo.Resource{{Name: "r", URI: "demo://r"}},
			prompts:   []mcpgo.Prompt{{Name: "p"}},
		},
	}
	for range 3 { // map order must not matter
		wrapped, errs := p.wrap(listed)
		require.Empty(t, errs)
		byRaw := map[string]string{}
		seen := map[string]bool{}
		for _, w := range wrapped {
			require.LessOrEqual(t, len(w.Name()), MaxToolNameLen)
			require.Regexp(t, `^[a-zA-Z0-9_-]+$`, w.Name())
			require.False(t, seen[w.Name()], "duplicate %s", w.Name())
			seen[w.Name()] = true
			byRaw[w.Server()+"/"+w.RawName()] = w.Name()
		}
		require.Len(t, wrapped, 9)
		require.Equal(t, "mcp_s_prompt_p", byRaw["s/p"])
		require.Equal(t, "mcp_s_resource_r", byRaw["s/demo://r"], "r sorts before resource_r")
		require.Equal(t, disambiguate("mcp_s_resource_r", "s", "resource_r"), byRaw["s/resource_r"])
		require.Equal(t, "mcp_a_b_c", byRaw["a/b_c"], "first in (server, tool) order keeps the plain name")
		require.Equal(t, disambiguate("mcp_a_b_c", "a_b", "c"), byRaw["a_b/c"])
		require.Equal(t, "mcp_s_x_y", byRaw["s/x.y"], "x.y sorts before x_y")
		require.Equal(t, disambiguate("mcp_s_x_y", "s", "x_y"), byRaw["s/x_y"])
	}
}

func TestEnabledTools(t *testing.T) {
	for _, tc := range []struct {
		enabled []string
		want    bool
	}{
		{nil, true},
		{[]string{"*"}, true},
		{[]string{"echo"}, true},
		{[]string{"mcp_srv_echo"}, true},
		{[]string{"other"}, false},
		{[]string{}, false},
	} {
		require.Equal(t, tc.want, toolEnabled(tc.enabled, "echo", "mcp_srv_echo"), "%v", tc.enabled)
	}
	require.Equal(t, []string{"typo"}, unmatchedEnabled([]string{"*", "echo", "mcp_srv_sum", "typo"},
		[]string{"echo", "sum"}, []string{"mcp_srv_echo", "mcp_srv_sum"}))

	p := NewPool(map[string]config.MCPServer{"srv": {EnabledTools: []string{"echo", "mcp_srv_sum"}}}, nil)
	defer p.Close()
	wrapped, _ := p.wrap(map[string]listing{"srv": {tools: []mcpgo.Tool{{Name: "echo"}, {Name: "sum"}, {Name: "rm"}}}})
	var names []string
	for _, w := range wrapped {
		names = append(names, w.Name())
	}
	require.Equal(t, []string{"mcp_srv_echo", "mcp_srv_sum"}, names)
}

func TestTransportFor(t *testing.T) {
	for _, tc := range []struct {
		cfg  config.MCPServer
		want string
		err  string
	}{
		{cfg: config.MCPServer{Command: "npx"}, want: TransportStdio},
		{cfg: config.MCPServer{URL: "http://h:1/sse"}, want: TransportSSE},
		{cfg: config.MCPServer{URL: "http://h:1/sse/"}, want: TransportSSE},
		{cfg: config.MCPServer{URL: "http://h:1/sse?token=x"}, want: TransportSSE},
		{cfg: config.MCPServer{URL: "http://h:1/mcp"}, want: TransportHTTP},
		{cfg: config.MCPServer{URL: "http://h:1/sse-ish"}, want: TransportHTTP},
		{cfg: config.MCPServer{Command: "x", URL: "http://h/sse"}, want: TransportStdio},
		{cfg: config.MCPServer{Type: "sse", URL: "http://h/events"}, want: TransportSSE},
		{cfg: config.MCPServer{Type: "streamableHttp", URL: "http://h/sse"}, want: TransportHTTP},
		{cfg: config.MCPServer{}, err: "no command or url"},
		{cfg: config.MCPServer{Type: "stdio", URL: "http://h"}, err: "needs a command"},
		{cfg: config.MCPServer{Type: "sse", Command: "x"}, err: "needs a url"},
		{cfg: config.MCPServer{Type: "websocket", URL: "ws://h"}, err: `unknown transport type "websocket"`},
	} {
		got, err := TransportFor(tc.cfg)
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err, "%+v", tc.cfg)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, tc.want, got, "%+v", tc.cfg)
	}
}

func TestConvertResult(t *testing.T) {
	text := func(s string) mcpgo.Content { return mcpgo.NewTextContent(s) }
	for _, tc := range []struct {
		name  string
		res   *mcpgo.CallToolResult
		want  string
		isErr bool
	}{
		{"texts joined", &mcpgo.CallToolResult{Content: []mcpgo.Content{text("a"), text("b")}}, "a\nb", false},
		{"isError", &mcpgo.CallToolResult{IsError: true, Content: []mcpgo.Content{text("denied")}}, "Error: denied", true},
		{"isError keeps Error prefix", &mcpgo.CallToolResult{IsError: true, Content: []mcpgo.Content{text("Error: nope")}}, "Error: nope", true},
		{"isError without text", &mcpgo.CallToolResult{IsError: true}, "Error: MCP tool reported an error without a message", true},
		{"image", &mcpgo.CallToolResult{Content: []mcpgo.Content{text("look"), mcpgo.NewImageContent(tinyPNG, "image/png")}},
			"look\n[image: image/png, 4 bytes]", false},
		{"audio", &mcpgo.CallToolResult{Content: []mcpgo.Content{mcpgo.AudioContent{Type: "audio", Data: "AAAA", MIMEType: "audio/wav"}}},
			"[audio: audio/wav, 3 bytes]", false},
		{"resource link", &mcpgo.CallToolResult{Content: []mcpgo.Content{mcpgo.ResourceLink{Type: "resource_link", Name: "r", URI: "file:///r"}}},
			"[resource link: r <file:///r>]", false},
		{"embedded text", &mcpgo.CallToolResult{Content: []mcpgo.Content{mcpgo.EmbeddedResource{Type: "resource",
			Resource: mcpgo.TextResourceContents{URI: "test://1", Text: "body"}}}}, "[resource: test://1]\nbody", false},
		{"embedded blob", &mcpgo.CallToolResult{Content: []mcpgo.Content{mcpgo.EmbeddedResource{Type: "resource",
			Resource: mcpgo.BlobResourceContents{URI: "test://2", MIMEType: "application/gzip", Blob: "AAAAAA=="}}}},
			"[resource: test://2, application/gzip, 4 bytes]", false},
		{"structured only", &mcpgo.CallToolResult{StructuredContent: map[string]any{"t": 1}}, `{"t":1}`, false},
		{"empty", &mcpgo.CallToolResult{}, "", false},
		{"nil", nil, "Error: MCP server returned no result", true},
	} {
		got := ConvertResult(tc.res)
		require.Equal(t, tc.want, got.Text, tc.name)
		require.Equal(t, tc.isErr, got.IsError, tc.name)
	}
}

func TestSchemaAndFlags(t *testing.T) {
	yes, no := true, false
	tool, err := newTool(nil, "s", "mcp_s_t", mcpgo.Tool{Name: "t"})
	require.NoError(t, err)
	require.JSONEq(t, `{"type":"object","properties":{},"required":[]}`, string(tool.Parameters()))
	require.Equal(t, "t", tool.Description(), "description falls back to the name")
	require.Equal(t, tools.Flags{SideEffects: true}, tool.Flags())

	tool, err = newTool(nil, "s", "mcp_s_t", mcpgo.Tool{Name: "t", Description: "d", Annotations: mcpgo.ToolAnnotation{ReadOnlyHint: &yes}})
	require.NoError(t, err)
	require.Equal(t, tools.Flags{ReadOnly: true}, tool.Flags())
	require.Equal(t, "d", tool.Description())

	tool, _ = newTool(nil, "s", "mcp_s_t", mcpgo.Tool{Name: "t", Annotations: mcpgo.ToolAnnotation{ReadOnlyHint: &no}})
	require.Equal(t, tools.Flags{SideEffects: true}, tool.Flags())

	var def mcpgo.Tool
	require.NoError(t, json.Unmarshal([]byte(`{"name":"t","inputSchema":{"$schema":"http://json-schema.org/draft-07/schema#",
		"properties":{"p":{"$ref":"#/definitions/P"}},"definitions":{"P":{"type":"string"}}}}`), &def))
	tool, err = newTool(nil, "s", "mcp_s_t", def)
	require.NoError(t, err)
	reg := tools.NewRegistry()
	require.NoError(t, reg.TryRegister(tool), "draft-07 definitions must still compile: %s", tool.Parameters())

	_, err = newTool(nil, "s", "mcp_s_t", mcpgo.Tool{Name: "t", InputSchema: mcpgo.ToolInputSchema{Type: "array"}})
	require.ErrorContains(t, err, `type is "array"`)
}

func TestStdioEnv(t *testing.T) {
	t.Setenv("MCP_TEST_PARENT_SECRET", "s3cret")
	t.Setenv("HOME", "/home/test")
	env := stdioEnv(map[string]string{"B": "2", "A": "1", "HOME": "/override"})
	require.Contains(t, env, "HOME=/override")
	require.NotContains(t, env, "HOME=/home/test")
	require.Contains(t, env, "A=1")
	require.Less(t, indexOf(env, "A=1"), indexOf(env, "B=2"), "sorted, so the child env is deterministic")
	for _, kv := range env {
		require.NotContains(t, kv, "s3cret", "the parent's secrets stay out")
	}
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

// TestHTTPHeadersAndBackoff checks both HTTP transports send the configured
// headers, and that a failing server is retried only after the backoff.
func TestHTTPHeadersAndBackoff(t *testing.T) {
	var hits atomic.Int32
	var mu sync.Mutex
	got := map[string]string{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		mu.Lock()
		got[r.URL.Path] = r.Header.Get("X-Nanobot-Test")
		mu.Unlock()
		http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	hdr := map[string]string{"X-Nanobot-Test": "yes"}
	p := NewPool(map[string]config.MCPServer{
		"h": {URL: srv.URL + "/mcp", Headers: hdr},
		"s": {URL: srv.URL + "/sse", Headers: hdr},
	}, nil)
	defer p.Close()
	p.backoff = 300 * time.Millisecond

	ts, errs := p.Tools(context.Background())
	require.Empty(t, ts)
	require.Len(t, errs, 2)
	mu.Lock()
	require.Equal(t, map[string]string{"/mcp": "yes", "/sse": "yes"}, got)
	mu.Unlock()

	before := hits.Load()
	_, errs = p.Tools(context.Background())
	require.Len(t, errs, 2)
	require.ErrorContains(t, errs[0], "next retry in")
	require.Equal(t, before, hits.Load(), "no new attempt inside the backoff")

	time.Sleep(350 * time.Millisecond)
	_, errs = p.Tools(context.Background())
	require.Len(t, errs, 2)
	require.Greater(t, hits.Load(), before, "retried after the backoff")
	srvState := p.servers["h"]
	srvState.mu.Lock()
	defer srvState.mu.Unlock()
	require.Equal(t, 2, srvState.failures)
	require.InDelta(t, float64(600*time.Millisecond), float64(time.Until(srvState.retryAt)), float64(200*time.Millisecond), "backoff doubles")
}

// TestCancelledConnectIsNotAFailure: a turn that gives up mid-connect must
// not put a healthy but slow server into backoff.
func TestCancelledConnectIsNotAFailure(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // only then does the server notice the client hanging up
		<-r.Context().Done()
	}))
	defer srv.Close()
	p := NewPool(map[string]config.MCPServer{"slow": {URL: srv.URL + "/mcp"}}, nil)
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, errs := p.Tools(ctx)
	require.Len(t, errs, 1)
	s := p.servers["slow"]
	s.mu.Lock()
	defer s.mu.Unlock()
	require.Zero(t, s.failures)
	require.True(t, s.retryAt.IsZero())
}
