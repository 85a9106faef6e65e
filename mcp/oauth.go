package mcp

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/url"
	"time"

	mcpclient "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/internal/hostcheck"
)

// AuthOAuth is tools.mcpServers.NAME.auth for a remote server that needs an
// OAuth 2.1 login (authorization code with PKCE, dynamic client registration).
const AuthOAuth = "oauth"

// OAuthCallbackPath is where the browser returns after authorizing, as in nanobot.
const OAuthCallbackPath = "/auth/mcp/callback"

// loginTimeout bounds the wait for the user to authorize in the browser (nanobot: 300 s).
const loginTimeout = 5 * time.Minute

// oauthClientName is what a dynamic registration calls us.
const oauthClientName = "nanobot"

// checkAuth validates auth for a server whose transport is kind.
func checkAuth(cfg config.MCPServer, kind string) error {
	switch cfg.Auth {
	case "":
		return nil
	case AuthOAuth:
		if kind == TransportStdio {
			return errors.New("OAuth requires an SSE or Streamable HTTP transport")
		}
		return nil
	default:
		return fmt.Errorf("unknown auth %q (want \"oauth\" or none)", cfg.Auth)
	}
}

// oauthConfig is mcp-go's OAuth setup for a server that logged in: the
// registered client and the token store; mcp-go adds the bearer token to
// every request, and the store refreshes an expired one under the
// credentials file's lock, so processes sharing it refresh once.
// Without a stored token it says to run the login command, as nanobot does
// not start a browser flow from a background connection either.
func oauthConfig(home, name string, cfg config.MCPServer) (transport.OAuthConfig, error) {
	tokens := newOAuthTokens(home, name, cfg.URL)
	e, err := tokens.entry()
	if err != nil {
		return transport.OAuthConfig{}, err
	}
	if e == nil || e.Tokens == nil || e.Tokens.AccessToken == "" || e.ClientInfo == nil {
		return transport.OAuthConfig{}, fmt.Errorf("the server needs an OAuth login: run `nanobot mcp login %s`", name)
	}
	oc := transport.OAuthConfig{
		ClientID:                e.ClientInfo.ClientID,
		ClientSecret:            e.ClientInfo.ClientSecret,
		TokenEndpointAuthMethod: e.ClientInfo.TokenEndpointAuthMethod,
		RedirectURI:             e.RedirectURI,
		TokenStore:              tokens,
		PKCEEnabled:             true,
	}
	base, err := discoveryURL(cfg.URL)
	if err != nil {
		return transport.OAuthConfig{}, err
	}
	tokens.refresher = transport.NewOAuthHandler(oc)
	tokens.refresher.SetBaseURL(base)
	return oc, nil
}

// Login runs the browser authorization of one remote server: it registers
// a client dynamically, listens on listenAddr (127.0.0.1, port 0 picks one)
// for the callback, hands the authorization URL to show, and stores the
// tokens (0600) once the browser comes back. It blocks until then, the
// context ends or loginTimeout passes.
func Login(ctx context.Context, home, name string, cfg config.MCPServer, listenAddr string, show func(authURL string)) error {
	kind, err := TransportFor(cfg)
	if err != nil {
		return err
	}
	if cfg.Auth != AuthOAuth {
		return fmt.Errorf("MCP server %q does not use OAuth (set tools.mcpServers.%s.auth to \"oauth\")", name, name)
	}
	if err := checkAuth(cfg, kind); err != nil {
		return err
	}
	if listenAddr == "" {
		listenAddr = "127.0.0.1:0"
	}
	if host, _, err := net.SplitHostPort(listenAddr); err != nil || !hostcheck.Loopback(host) {
		return fmt.Errorf("the OAuth callback must listen on a loopback address, not %q", listenAddr)
	}
	ln, err := net.Listen("tcp", listenAddr)
	if err != nil {
		return fmt.Errorf("listen for the OAuth callback: %w", err)
	}
	defer ln.Close()
	redirect := fmt.Sprintf("http://%s%s", ln.Addr().String(), OAuthCallbackPath)

	tokens := newOAuthTokens(home, name, cfg.URL)
	h := transport.NewOAuthHandler(transport.OAuthConfig{RedirectURI: redirect, TokenStore: tokens, PKCEEnabled: true})
	base, err := discoveryURL(cfg.URL)
	if err != nil {
		return err
	}
	h.SetBaseURL(base)

	ctx, cancel := context.WithTimeout(ctx, loginTimeout)
	defer cancel()
	// A registration binds the client to this redirect URI, whose port is new.
	if err := h.RegisterClient(ctx, oauthClientName); err != nil {
		return fmt.Errorf("register with the authorization server: %w", err)
	}
	verifier, err := transport.GenerateCodeVerifier()
	if err != nil {
		return err
	}
	state, err := transport.GenerateState()
	if err != nil {
		return err
	}
	authURL, err := h.GetAuthorizationURL(ctx, state, transport.GenerateCodeChallenge(verifier))
	if err != nil {
		return fmt.Errorf("build the authorization URL: %w", err)
	}

	type callback struct{ code, state, err string }
	got := make(chan callback, 1)
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+OAuthCallbackPath, func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		cb := callback{code: q.Get("code"), state: q.Get("state"), err: q.Get("error")}
		if d := q.Get("error_description"); d != "" {
			cb.err += ": " + d
		}
		if cb.state != state { // a stray or forged request must not end the wait
			http.Error(w, "This is not the authorization nanobot is waiting for.", http.StatusBadRequest)
			return
		}
		select {
		case got <- cb:
		default:
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if cb.err != "" {
			fmt.Fprintf(w, "<p>Authorization of %s failed: %s</p>", html.EscapeString(name), html.EscapeString(cb.err))
			return
		}
		fmt.Fprintf(w, "<p>nanobot is authorized for %s. You can close this tab.</p>", html.EscapeString(name))
	})
	srv := &http.Server{
		Handler:           hostcheck.New(ln.Addr().String(), nil, "").Guard(mux),
		ReadHeaderTimeout: 10 * time.Second,
	}
	go srv.Serve(ln) //nolint:errcheck // ends with Shutdown below
	defer func() {
		sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer scancel()
		_ = srv.Shutdown(sctx)
	}()

	show(authURL)
	var cb callback
	select {
	case cb = <-got:
	case <-ctx.Done():
		return fmt.Errorf("no authorization arrived at %s: %w", redirect, ctx.Err())
	}
	if cb.err != "" {
		return fmt.Errorf("the authorization server refused: %s", cb.err)
	}
	if cb.code == "" {
		return errors.New("the authorization server sent no code")
	}
	// The client and redirect first: the tokens are bound to them.
	if err := tokens.update(func(e *storedCredential) {
		e.ClientInfo = &clientInfoJSON{ClientID: h.GetClientID(), ClientSecret: h.GetClientSecret(), TokenEndpointAuthMethod: h.GetTokenEndpointAuthMethod()}
		e.RedirectURI = redirect
		e.Tokens = nil
	}); err != nil {
		return err
	}
	if err := h.ProcessAuthorizationResponse(ctx, cb.code, cb.state, verifier); err != nil {
		return fmt.Errorf("exchange the authorization code: %w", err)
	}
	return nil
}

// withLoginHint says how to fix a server whose OAuth tokens are gone or
// can no longer be refreshed.
func withLoginHint(err error, name string) error {
	if mcpclient.IsOAuthAuthorizationRequiredError(err) {
		return fmt.Errorf("%w: run `nanobot mcp login %s`", err, name)
	}
	return err
}

// discoveryURL is the server URL without query or fragment, where OAuth
// discovery starts (as mcp-go's transports do).
func discoveryURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("server url: %w", err)
	}
	u.RawQuery, u.Fragment = "", ""
	return u.String(), nil
}
