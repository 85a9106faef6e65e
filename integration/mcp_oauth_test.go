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

// oauthDemoHome starts the OAuth demo server, temporal-dev and a scripted
// model, and a home whose MCP server "demo" needs an OAuth login.
func oauthDemoHome(t *testing.T, extra map[string]any) (*testenv.DevServer, *modeltest.Server, *testenv.Home) {
	t.Helper()
	url := startOAuthMCP(t)
	dev := testenv.StartDevServer(t)
	model := modeltest.New()
	t.Cleanup(model.Close)
	cfg := map[string]any{"tools": map[string]any{"mcpServers": map[string]any{"demo": map[string]any{"url": url, "auth": "oauth"}}}}
	for k, v := range extra {
		cfg[k] = v
	}
	return dev, model, testenv.NewHome(t, model.URL(), cfg)
}

// loginAsABrowser runs `nanobot mcp login demo`, opens the URL it prints as
// a browser would (the authorization server approves at once and sends it
// back to the callback), and returns what the command printed once it ended.
func loginAsABrowser(t *testing.T, env []string) []string {
	t.Helper()
	login := exec.Command(testenv.NanobotBin(t), "mcp", "login", "demo")
	login.Env = env
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
	return printed
}

// TestMCPOAuthLoginThenTurn: `nanobot mcp login demo` prints the URL, the
// "browser" opens it and comes back to the command's callback, the tokens
// land 0600 under ~/.nanobot, and a worker's turn then calls the server's tool.
func TestMCPOAuthLoginThenTurn(t *testing.T) {
	dev, model, home := oauthDemoHome(t, nil)

	printed := loginAsABrowser(t, home.Env(dev.Addr))
	require.Contains(t, strings.Join(printed, "\n"), "Authorized: demo's tokens are stored in ~/.nanobot/auth/mcp.json")
	creds := filepath.Join(home.Dir, ".nanobot", "auth", "mcp.json")
	fi, err := os.Stat(creds)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	startWorker(t, home.Env(dev.Addr))
	require.Equal(t, "Hello, Ada!", greetAda(t, dev, model, home, "oauth"), "the worker called the OAuth server with the stored token")
}

// greetAda runs a turn in session cli:<session> whose model calls the demo's
// greet tool, and returns what the tool answered.
func greetAda(t *testing.T, dev *testenv.DevServer, model *modeltest.Server, home *testenv.Home, session string) string {
	t.Helper()
	model.Script(
		modeltest.ToolCalls(modeltest.Call{ID: "g", Name: "mcp_demo_greet", Args: `{"name":"Ada"}`}),
		modeltest.Text("Greeted."),
	)
	bus := &channels.Bus{Client: dev.Client, Settings: testenv.Settings(protocol.Settings{Model: "test-model"})}
	_, err := bus.Publish(context.Background(), protocol.Inbound{ID: session, SessionKey: "cli:" + session, Route: protocol.Route{Channel: "cli", ChatID: session}, Content: "greet Ada"})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var res protocol.TurnResult
	require.NoError(t, dev.Client.GetWorkflow(ctx, "turn/cli:"+session, "").Get(ctx, &res))
	require.Equal(t, "Greeted.", res.ReplyPreview)
	_, msgs := sessionLines(t, home, "cli:"+session)
	var greeted string
	for _, m := range msgs {
		if m.Role == chat.RoleTool && m.ToolCallID == "g" {
			greeted = m.Content
		}
	}
	return greeted
}

// TestMCPOAuthLoginThroughTheGateway: with a gateway running, `nanobot mcp
// login` sends the browser back to the gateway's own callback (on
// gateway.port, beside /health); the gateway exchanges the code and stores
// the tokens, the command reports them, and the gateway's next turn calls
// the server's tool without a restart.
func TestMCPOAuthLoginThroughTheGateway(t *testing.T) {
	port := testenv.FreePort(t)
	dev, model, home := oauthDemoHome(t, map[string]any{"gateway": map[string]any{"port": port}})
	env := append(home.Env(dev.Addr), fmt.Sprintf("NANOBOT_HEALTH_ADDR=127.0.0.1:%d", port))
	startGateway(t, dev, env)

	printed := strings.Join(loginAsABrowser(t, env), "\n")
	require.Contains(t, printed, fmt.Sprintf("The browser comes back to the gateway at http://127.0.0.1:%d.", port))
	require.Contains(t, printed, fmt.Sprintf("redirect_uri=http%%3A%%2F%%2F127.0.0.1%%3A%d%%2Fauth%%2Fmcp%%2Fcallback", port))
	require.Contains(t, printed, "Authorized: demo's tokens are stored in ~/.nanobot/auth/mcp.json")
	fi, err := os.Stat(filepath.Join(home.Dir, ".nanobot", "auth", "mcp.json"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	require.Equal(t, "Hello, Ada!", greetAda(t, dev, model, home, "gw-oauth"), "the gateway called the server with the token it stored")
}
