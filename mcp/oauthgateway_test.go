package mcp

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	mcpserver "github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/mcp/oauthpeer"
	"github.com/nanobot-durable/nanobot/tools"
)

// TestOAuthLoginThroughTheGatewaysCallback: the browser comes back to the
// gateway, which exchanges the code; the login command sees the tokens, and
// a connection uses them. The callback's state is good once: a replay, a
// forged state and a refusal by the authorization server are answered and
// store nothing.
func TestOAuthLoginThroughTheGatewaysCallback(t *testing.T) {
	peerSrv := oauthpeer.New(mcpserver.NewStreamableHTTPServer(newTestServer()))
	t.Cleanup(peerSrv.Close)
	home := t.TempDir()
	cfg := config.MCPServer{URL: peerSrv.URL(), Auth: AuthOAuth}
	servers := map[string]config.MCPServer{"srv": cfg, "plain": {URL: "http://127.0.0.1:1/mcp"}}
	mux := http.NewServeMux()
	mux.Handle(OAuthCallbackPath, CallbackHandler(home, func() map[string]config.MCPServer { return servers }))
	gateway := httptest.NewServer(mux)
	t.Cleanup(gateway.Close)

	callbacks := make(chan string, 1)
	show := func(authURL string) {
		go func() { // the browser: the authorization server approves at once and redirects to the gateway
			client := &http.Client{CheckRedirect: func(r *http.Request, _ []*http.Request) error {
				if strings.HasPrefix(r.URL.String(), gateway.URL) {
					callbacks <- r.URL.String()
				}
				return nil
			}}
			resp, err := client.Get(authURL)
			if err != nil {
				t.Errorf("open %s: %v", authURL, err)
				return
			}
			body, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if !strings.Contains(string(body), "nanobot is authorized for srv") {
				t.Errorf("the gateway's page says %q", body)
			}
		}()
	}
	require.NoError(t, LoginViaGateway(context.Background(), home, "srv", cfg, gateway.URL+"/", show))
	require.True(t, LoggedIn(home, "srv", cfg.URL))
	callback := <-callbacks
	require.True(t, strings.HasPrefix(callback, gateway.URL+OAuthCallbackPath+"?"), "the browser came back to the gateway: %s", callback)
	e, err := newOAuthTokens(home, "srv", cfg.URL).entry()
	require.NoError(t, err)
	require.Nil(t, e.Pending, "the finished login leaves nothing pending")

	p := NewPool(map[string]config.MCPServer{"srv": cfg}, nil)
	p.home = home
	defer p.Close()
	require.Equal(t, tools.Result{Text: "echo: hi"}, byName(t, p)["mcp_srv_echo"].Run(context.Background(), tools.Env{}, map[string]any{"message": "hi"}))

	for _, u := range []string{callback, gateway.URL + OAuthCallbackPath + "?code=x&state=forged"} {
		resp, err := http.Get(u)
		require.NoError(t, err)
		_ = resp.Body.Close()
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, "a used or forged state is refused: %s", u)
	}
}

// TestOAuthGatewayLoginRefused: the authorization server sends an error to
// the gateway; the login command fails with it.
func TestOAuthGatewayLoginRefused(t *testing.T) {
	peerSrv := oauthpeer.New(mcpserver.NewStreamableHTTPServer(newTestServer()))
	t.Cleanup(peerSrv.Close)
	home := t.TempDir()
	cfg := config.MCPServer{URL: peerSrv.URL(), Auth: AuthOAuth}
	gateway := httptest.NewServer(CallbackHandler(home, func() map[string]config.MCPServer { return map[string]config.MCPServer{"srv": cfg} }))
	t.Cleanup(gateway.Close)
	show := func(authURL string) {
		u, err := url.Parse(authURL)
		require.NoError(t, err)
		go func() { // the user clicks "deny": the server redirects with an error
			resp, err := http.Get(gateway.URL + OAuthCallbackPath + "?error=access_denied&error_description=no&state=" + u.Query().Get("state"))
			if err == nil {
				_ = resp.Body.Close()
			}
		}()
	}
	err := LoginViaGateway(context.Background(), home, "srv", cfg, gateway.URL, show)
	require.ErrorContains(t, err, "access_denied: no")
	require.False(t, LoggedIn(home, "srv", cfg.URL))
}

// TestPoolConnectsAtOnceAfterALogin: a server left out for want of a login
// is tried again as soon as the tokens are stored, not after its backoff.
func TestPoolConnectsAtOnceAfterALogin(t *testing.T) {
	peerSrv := oauthpeer.New(mcpserver.NewStreamableHTTPServer(newTestServer()))
	t.Cleanup(peerSrv.Close)
	home := t.TempDir()
	cfg := config.MCPServer{URL: peerSrv.URL(), Auth: AuthOAuth}
	p := NewPool(map[string]config.MCPServer{"srv": cfg}, nil)
	p.home, p.backoff = home, time.Hour
	defer p.Close()
	_, errs := p.Tools(context.Background())
	require.Len(t, errs, 1)
	require.ErrorContains(t, errs[0], "nanobot mcp login srv")

	show, status := browse(t)
	require.NoError(t, Login(context.Background(), home, "srv", cfg, "", show))
	require.Equal(t, http.StatusOK, <-status)
	require.Equal(t, tools.Result{Text: "echo: hi"}, byName(t, p)["mcp_srv_echo"].Run(context.Background(), tools.Env{}, map[string]any{"message": "hi"}))
}
