package integration

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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

// startOAuthMCP runs the MCP TypeScript SDK's example server behind its
// OAuth authorization server (npm, e2e/node_modules) and returns its URL.
func startOAuthMCP(t *testing.T) string {
	t.Helper()
	script := filepath.Join(testenv.RepoRoot(t), "e2e", "node_modules", "@modelcontextprotocol", "sdk", "dist", "esm", "examples", "server", "simpleStreamableHttp.js")
	if _, err := os.Stat(script); err != nil {
		peer.Missing(t, peer.MCPServers, "the MCP SDK's example server is not installed: install Node.js and npm, then run make e2e (e2e/install.sh)")
	}
	peer.Used(t, peer.MCPServers)
	mcpPort, authPort := testenv.FreePort(t), testenv.FreePort(t)
	cmd := exec.Command("node", script, "--oauth")
	cmd.Env = append(os.Environ(), "MCP_PORT="+strconv.Itoa(mcpPort), "MCP_AUTH_PORT="+strconv.Itoa(authPort))
	var out testenv.SyncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for _, port := range []int{mcpPort, authPort} {
		require.Eventually(t, func() bool {
			c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 200*time.Millisecond)
			if err == nil {
				_ = c.Close()
			}
			return err == nil
		}, 20*time.Second, 50*time.Millisecond, "the OAuth demo did not listen on %d: %s", port, out.String())
	}
	return fmt.Sprintf("http://localhost:%d/mcp", mcpPort) // the name its metadata uses
}

// TestMCPOAuthLoginThenTurn: `nanobot mcp login demo` prints the URL, the
// "browser" opens it and comes back to the command's callback, the tokens
// land 0600 under ~/.nanobot, and a worker's turn then calls the server's tool.
func TestMCPOAuthLoginThenTurn(t *testing.T) {
	url := startOAuthMCP(t)
	dev := testenv.StartDevServer(t)
	model := modeltest.New()
	defer model.Close()
	home := testenv.NewHome(t, model.URL(), map[string]any{
		"tools": map[string]any{"mcpServers": map[string]any{"demo": map[string]any{"url": url, "auth": "oauth"}}},
	})

	login := exec.Command(testenv.NanobotBin(t), "mcp", "login", "demo")
	login.Env = home.Env(dev.Addr)
	stdout, err := login.StdoutPipe()
	require.NoError(t, err)
	var stderr testenv.SyncBuffer
	login.Stderr = &stderr
	require.NoError(t, login.Start())
	t.Cleanup(func() { _ = login.Process.Kill(); _ = login.Wait() })
	lines := bufio.NewScanner(stdout)
	var authURL string
	var printed []string
	for authURL == "" && lines.Scan() {
		printed = append(printed, lines.Text())
		if u := strings.TrimSpace(lines.Text()); strings.HasPrefix(u, "http://") {
			authURL = u
		}
	}
	require.NotEmpty(t, authURL, "login printed no URL: %q %s", printed, stderr.String())
	resp, err := http.Get(authURL) // the browser: authorize, then back to the callback
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	for lines.Scan() {
		printed = append(printed, lines.Text())
	}
	require.NoError(t, login.Wait(), "%q %s", printed, stderr.String())
	require.Contains(t, strings.Join(printed, "\n"), "Authorized: demo's tokens are stored in ~/.nanobot/auth/mcp.json")
	creds := filepath.Join(home.Dir, ".nanobot", "auth", "mcp.json")
	fi, err := os.Stat(creds)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	startWorker(t, home.Env(dev.Addr))
	model.Script(
		modeltest.ToolCalls(modeltest.Call{ID: "g", Name: "mcp_demo_greet", Args: `{"name":"Ada"}`}),
		modeltest.Text("Greeted."),
	)
	bus := &channels.Bus{Client: dev.Client, Settings: testenv.Settings(protocol.Settings{Model: "test-model"})}
	_, err = bus.Publish(context.Background(), protocol.Inbound{ID: "oauth", SessionKey: "cli:oauth", Route: protocol.Route{Channel: "cli", ChatID: "oauth"}, Content: "greet Ada"})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var res protocol.TurnResult
	require.NoError(t, dev.Client.GetWorkflow(ctx, "turn/cli:oauth", "").Get(ctx, &res))
	require.Equal(t, "Greeted.", res.ReplyPreview)
	_, msgs := sessionLines(t, home, "cli:oauth")
	var greeted string
	for _, m := range msgs {
		if m.Role == chat.RoleTool && m.ToolCallID == "g" {
			greeted = m.Content
		}
	}
	require.Equal(t, "Hello, Ada!", greeted, "the worker called the OAuth server with the stored token")
}
