package mcp

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/config"
)

// testServerEnv makes the test binary act as a small stdio MCP server, so
// the stdio transport, process death and env handling are tested without npm.
const testServerEnv = "NANOBOT_MCP_TEST_SERVER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(rawServerEnv); mode != "" {
		serveRawStdio(mode)
		return
	}
	if os.Getenv(testServerEnv) == "1" {
		if err := mcpserver.ServeStdio(newTestServer()); err != nil {
			fmt.Fprintln(os.Stderr, "test server:", err)
			os.Exit(1)
		}
		return
	}
	announceE2E()
	os.Exit(m.Run())
}

// tinyPNG is four bytes pretending to be an image; only its size matters.
var tinyPNG = base64.StdEncoding.EncodeToString([]byte{0x89, 'P', 'N', 'G'})

func newTestServer() *mcpserver.MCPServer {
	s := mcpserver.NewMCPServer("nanobot-test", "1.0.0", mcpserver.WithToolCapabilities(true))
	text := func(format string, a ...any) (*mcpgo.CallToolResult, error) {
		return mcpgo.NewToolResultText(fmt.Sprintf(format, a...)), nil
	}
	s.AddTool(mcpgo.NewTool("echo", mcpgo.WithDescription("Echo a message"), mcpgo.WithReadOnlyHintAnnotation(true),
		mcpgo.WithString("message", mcpgo.Required())),
		func(_ context.Context, r mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			return text("echo: %s", r.GetString("message", ""))
		})
	s.AddTool(mcpgo.NewTool("fail"), func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		return mcpgo.NewToolResultError("boom"), nil
	})
	s.AddTool(mcpgo.NewTool("image"), func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		return mcpgo.NewToolResultImage("here it is", tinyPNG, "image/png"), nil
	})
	s.AddTool(mcpgo.NewTool("env"), func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		wd, _ := os.Getwd()
		return text("%s|%s|%s", os.Getenv("MCP_TEST_VAR"), os.Getenv("MCP_TEST_PARENT_SECRET"), wd)
	})
	s.AddTool(mcpgo.NewTool("read", mcpgo.WithString("path", mcpgo.Required())),
		func(_ context.Context, r mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			data, err := os.ReadFile(r.GetString("path", ""))
			if err != nil {
				return text("read failed: %v", err)
			}
			return text("%s", data)
		})
	s.AddTool(mcpgo.NewTool("write", mcpgo.WithString("path", mcpgo.Required())),
		func(_ context.Context, r mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			if err := os.WriteFile(r.GetString("path", ""), []byte("x"), 0o644); err != nil {
				return text("write failed: %v", err)
			}
			return text("written; HOME=%s", os.Getenv("HOME"))
		})
	s.AddTool(mcpgo.NewTool("dial", mcpgo.WithString("addr", mcpgo.Required())),
		func(_ context.Context, r mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			c, err := net.DialTimeout("tcp", r.GetString("addr", ""), 10*time.Second)
			if err != nil {
				return text("dial failed: %v", err)
			}
			_ = c.Close()
			return text("connected")
		})
	// fetch GETs url through $HTTP_PROXY whatever the host (Go would go direct to a loopback one).
	s.AddTool(mcpgo.NewTool("fetch", mcpgo.WithString("url", mcpgo.Required())),
		func(_ context.Context, r mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			proxy, err := url.Parse(os.Getenv("HTTP_PROXY"))
			if err != nil || proxy.Host == "" {
				return text("no HTTP_PROXY (%q)", os.Getenv("HTTP_PROXY"))
			}
			c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxy)}, Timeout: 30 * time.Second}
			resp, err := c.Get(r.GetString("url", ""))
			if err != nil {
				return text("fetch failed: %v", err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			return text("%d %s", resp.StatusCode, body)
		})
	s.AddTool(mcpgo.NewTool("pid"), func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		return text("%d", os.Getpid())
	})
	s.AddTool(mcpgo.NewTool("sleep", mcpgo.WithNumber("ms")),
		func(ctx context.Context, r mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			select {
			case <-time.After(time.Duration(r.GetFloat("ms", 0)) * time.Millisecond):
			case <-ctx.Done():
			}
			return text("slept")
		})
	s.AddTool(mcpgo.NewTool("die"), func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		fmt.Fprintln(os.Stderr, "test server: dying on purpose")
		os.Exit(3)
		return nil, nil
	})
	s.AddTool(mcpgo.NewTool("weird.name/v2"), func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		return text("weird")
	})
	// add registers a new tool, which makes the server send tools/list_changed.
	s.AddTool(mcpgo.NewTool("add", mcpgo.WithString("name", mcpgo.Required())),
		func(_ context.Context, r mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			name := r.GetString("name", "")
			s.AddTool(mcpgo.NewTool(name, mcpgo.WithDescription("added at run time")),
				func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
					return text("%s ran", name)
				})
			return text("added %s", name)
		})
	s.AddTool(mcpgo.NewTool("remove", mcpgo.WithString("name", mcpgo.Required())),
		func(_ context.Context, r mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			s.DeleteTools(r.GetString("name", ""))
			return text("removed")
		})
	return s
}

// selfServer configures the test binary as a stdio server.
func selfServer(t *testing.T) config.MCPServer {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	return config.MCPServer{Command: exe, Env: map[string]string{testServerEnv: "1"}, EnabledTools: []string{"*"}}
}

// pidOf asks the server for its pid through the pool.
func pidOf(t *testing.T, p *Pool, server string) int {
	t.Helper()
	res := callTool(t, p, ToolName(server, "pid"), nil)
	require.False(t, res.IsError, res.Text)
	pid, err := strconv.Atoi(res.Text)
	require.NoError(t, err)
	return pid
}
