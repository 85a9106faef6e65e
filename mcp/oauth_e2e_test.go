package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	mcpserver "github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/internal/peer"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/mcp/oauthpeer"
	"github.com/nanobot-durable/nanobot/tools"
)

// oauthDemoServer is the MCP TypeScript SDK's example streamable HTTP server
// with its OAuth authorization server (--oauth: dynamic registration, PKCE,
// an authorize endpoint that approves at once), installed by e2e/install.sh.
var oauthDemoServer = filepath.Join("..", "e2e", "node_modules", "@modelcontextprotocol", "sdk", "dist", "esm", "examples", "server", "simpleStreamableHttp.js")

// startOAuthDemo runs it on free ports and returns the MCP URL.
func startOAuthDemo(t *testing.T) string {
	t.Helper()
	script, err := filepath.Abs(oauthDemoServer)
	require.NoError(t, err)
	if _, err := os.Stat(script); err != nil || e2eMissing() != "" {
		peer.Missing(t, peer.MCPServers, e2eHint)
	}
	peer.Used(t, peer.MCPServers)
	mcpPort, authPort := testenv.FreePort(t), testenv.FreePort(t)
	cmd := exec.Command("node", script, "--oauth")
	cmd.Env = append(os.Environ(), "MCP_PORT="+strconv.Itoa(mcpPort), "MCP_AUTH_PORT="+strconv.Itoa(authPort))
	out := startPeerProcess(t, cmd)
	waitListening(t, mcpPort, out, "the OAuth demo's MCP server")
	waitListening(t, authPort, out, "the OAuth demo's authorization server")
	// The demo names itself localhost in its metadata; the URL must match.
	return fmt.Sprintf("http://localhost:%d/mcp", mcpPort)
}

// browse plays the user's browser: it opens the authorization URL and
// follows the redirect back to the login's callback.
func browse(t *testing.T) (func(string), <-chan int) {
	status := make(chan int, 1)
	return func(authURL string) {
		go func() {
			resp, err := http.Get(authURL)
			if err != nil {
				t.Errorf("open %s: %v", authURL, err)
				status <- 0
				return
			}
			_ = resp.Body.Close()
			status <- resp.StatusCode
		}()
	}, status
}

func TestE2EOAuthLoginThenTools(t *testing.T) {
	url := startOAuthDemo(t)
	home := t.TempDir()
	cfg := config.MCPServer{URL: url, Auth: AuthOAuth}
	ctx := context.Background()

	// Before the login the server is left out with the way to fix it.
	p := NewPool(map[string]config.MCPServer{"demo": cfg}, nil)
	p.home = home
	_, errs := p.Tools(ctx)
	require.Len(t, errs, 1)
	require.Contains(t, errs[0].Error(), "run `nanobot mcp login demo`")
	p.Close()

	require.False(t, LoggedIn(home, "demo", url))
	show, status := browse(t)
	var shown string
	require.NoError(t, Login(ctx, home, "demo", cfg, "", func(u string) { shown = u; show(u) }))
	require.Equal(t, http.StatusOK, <-status, "the callback answered the browser")
	require.True(t, LoggedIn(home, "demo", url))
	require.False(t, LoggedIn(home, "demo", url+"/other"), "bound to the URL")
	require.Contains(t, shown, "code_challenge_method=S256", "PKCE")
	require.Contains(t, shown, "redirect_uri=http%3A%2F%2F127.0.0.1%3A")

	path := filepath.Join(home, CredentialsFile)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "tokens are the owner's only")
	di, err := os.Stat(filepath.Dir(path))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), di.Mode().Perm())
	var st credentialStore
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &st))
	require.NotEmpty(t, st.Servers["demo"].Tokens.AccessToken)
	require.NotEmpty(t, st.Servers["demo"].ClientInfo.ClientID, "dynamic registration")

	p = NewPool(map[string]config.MCPServer{"demo": cfg}, nil)
	p.home = home
	defer p.Close()
	reg := tools.NewRegistry()
	require.Empty(t, p.Register(ctx, reg))
	res := reg.Execute(ctx, tools.Env{}, "mcp_demo_greet", `{"name":"Ada"}`)
	require.Equal(t, tools.Result{Text: "Hello, Ada!"}, res)
	_, ok := reg.Get("mcp_demo_prompt_greeting-template")
	require.True(t, ok, "prompts of an OAuth server too: %v", reg.Names())
}

// A login for another URL under the same name is not sent to this one.
func TestOAuthCredentialsAreBoundToTheURL(t *testing.T) {
	home := t.TempDir()
	a := newOAuthTokens(home, "s", "http://127.0.0.1:1/mcp")
	require.NoError(t, a.SaveToken(context.Background(), tokenFor("secret")))
	got, err := a.GetToken(context.Background())
	require.NoError(t, err)
	require.Equal(t, "secret", got.AccessToken)
	_, err = newOAuthTokens(home, "s", "http://127.0.0.1:2/mcp").GetToken(context.Background())
	require.ErrorIs(t, err, errNoToken())
	_, err = newOAuthTokens(home, "other", "http://127.0.0.1:1/mcp").GetToken(context.Background())
	require.ErrorIs(t, err, errNoToken())
}

func tokenFor(access string) *transport.Token {
	return &transport.Token{AccessToken: access, TokenType: "Bearer"}
}

func errNoToken() error { return transport.ErrNoToken }

func TestOAuthLoginRefusesAPublicCallback(t *testing.T) {
	err := Login(context.Background(), t.TempDir(), "s", config.MCPServer{URL: "http://127.0.0.1:1/mcp", Auth: AuthOAuth}, "0.0.0.0:0", func(string) {})
	require.ErrorContains(t, err, "loopback address")
	err = Login(context.Background(), t.TempDir(), "s", config.MCPServer{Command: "x", Auth: AuthOAuth}, "", func(string) {})
	require.ErrorContains(t, err, "OAuth requires an SSE or Streamable HTTP transport")
	err = Login(context.Background(), t.TempDir(), "s", config.MCPServer{URL: "http://127.0.0.1:1/mcp"}, "", func(string) {})
	require.ErrorContains(t, err, `set tools.mcpServers.s.auth to "oauth"`)
}

// An expired access token is refreshed with the stored refresh token, the
// new tokens are saved (still 0600) and the call goes through.
// loggedInToPeer logs in as server "srv" to a refresh fake that rotates refresh tokens.
func loggedInToPeer(t *testing.T) (*oauthpeer.Server, string, config.MCPServer, *oauthTokens) {
	t.Helper()
	peerSrv := oauthpeer.New(mcpserver.NewStreamableHTTPServer(newTestServer()))
	t.Cleanup(peerSrv.Close)
	home := t.TempDir()
	cfg := config.MCPServer{URL: peerSrv.URL(), Auth: AuthOAuth}
	show, status := browse(t)
	require.NoError(t, Login(context.Background(), home, "srv", cfg, "", show))
	require.Equal(t, http.StatusOK, <-status)
	return peerSrv, home, cfg, newOAuthTokens(home, "srv", cfg.URL)
}

func TestOAuthTokenRefresh(t *testing.T) {
	peerSrv, home, cfg, tokens := loggedInToPeer(t)
	ctx := context.Background()
	first, err := tokens.GetToken(ctx)
	require.NoError(t, err)
	require.NotEmpty(t, first.RefreshToken)

	p := NewPool(map[string]config.MCPServer{"srv": cfg}, nil)
	p.home = home
	defer p.Close()
	ts := byName(t, p)
	echo := map[string]any{"message": "hi"}
	require.Equal(t, tools.Result{Text: "echo: hi"}, ts["mcp_srv_echo"].Run(ctx, tools.Env{}, echo))

	// The token runs out: on the server, and by its expiry in the store.
	peerSrv.ExpireAccessTokens()
	require.NoError(t, tokens.update(func(e *storedCredential) { e.Tokens.ExpiresAt = time.Now().Add(-time.Minute) }))
	require.Equal(t, tools.Result{Text: "echo: hi"}, ts["mcp_srv_echo"].Run(ctx, tools.Env{}, echo))
	require.Equal(t, int32(1), peerSrv.Refreshes.Load())
	second, err := tokens.GetToken(ctx)
	require.NoError(t, err)
	require.NotEqual(t, first.AccessToken, second.AccessToken, "the refreshed token is stored")
	require.NotEqual(t, first.RefreshToken, second.RefreshToken, "and the rotated refresh token")
	fi, err := os.Stat(filepath.Join(home, CredentialsFile))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	// Access revoked: the call is an error result that says how to log in again.
	peerSrv.ExpireAccessTokens()
	peerSrv.RevokeRefreshTokens()
	require.NoError(t, tokens.update(func(e *storedCredential) { e.Tokens.ExpiresAt = time.Now().Add(-time.Minute) }))
	res := ts["mcp_srv_echo"].Run(ctx, tools.Env{}, echo)
	require.True(t, res.IsError, res.Text)
	require.Contains(t, res.Text, "nanobot mcp login srv")
}

// TestOAuthRefreshIsSharedAcrossProcesses: several connections with their
// own OAuth handlers (as the gateway and a workspace host each have) find
// the stored token expired at once. The server rotates refresh tokens, so
// a refresh token spent twice is refused and forces a new login; the
// credentials lock lets one refresh, and the others take its token.
func TestOAuthRefreshIsSharedAcrossProcesses(t *testing.T) {
	peerSrv, home, cfg, tokens := loggedInToPeer(t)
	ctx := context.Background()

	const processes = 4
	var echoes [processes]tools.Tool
	for i := range echoes {
		p := NewPool(map[string]config.MCPServer{"srv": cfg}, nil)
		p.home = home
		defer p.Close()
		echoes[i] = byName(t, p)["mcp_srv_echo"]
	}
	echo := map[string]any{"message": "hi"}
	for round := 1; round <= 5; round++ {
		peerSrv.ExpireAccessTokens()
		require.NoError(t, tokens.update(func(e *storedCredential) { e.Tokens.ExpiresAt = time.Now().Add(-time.Minute) }))
		results := make(chan tools.Result, processes)
		for _, tool := range echoes {
			go func() { results <- tool.Run(ctx, tools.Env{}, echo) }()
		}
		for range processes {
			require.Equal(t, tools.Result{Text: "echo: hi"}, <-results, "round %d", round)
		}
		require.Equal(t, int32(round), peerSrv.Refreshes.Load(), "one refresh per expiry, whoever made it")
	}
}
