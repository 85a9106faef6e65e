package mcp

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/internal/hostcheck"
)

// loginStart is a browser authorization under way: the client registered
// for its redirect, and the URL the user opens.
type loginStart struct {
	name            string
	tokens          *oauthTokens
	h               *transport.OAuthHandler
	redirect        string
	state, verifier string
	authURL         string
}

// startLogin registers a client for redirect and builds the authorization URL.
func startLogin(ctx context.Context, home, name string, cfg config.MCPServer, redirect string) (*loginStart, error) {
	kind, err := TransportFor(cfg)
	if err != nil {
		return nil, err
	}
	if cfg.Auth != AuthOAuth {
		return nil, fmt.Errorf("MCP server %q does not use OAuth (set tools.mcpServers.%s.auth to \"oauth\")", name, name)
	}
	if err := checkAuth(cfg, kind); err != nil {
		return nil, err
	}
	ls := &loginStart{name: name, tokens: newOAuthTokens(home, name, cfg.URL), redirect: redirect}
	ls.h = transport.NewOAuthHandler(transport.OAuthConfig{RedirectURI: redirect, TokenStore: ls.tokens, PKCEEnabled: true})
	base, err := discoveryURL(cfg.URL)
	if err != nil {
		return nil, err
	}
	ls.h.SetBaseURL(base)
	// A registration binds the client to this redirect URI.
	if err := ls.h.RegisterClient(ctx, oauthClientName); err != nil {
		return nil, fmt.Errorf("register with the authorization server: %w", err)
	}
	if ls.verifier, err = transport.GenerateCodeVerifier(); err != nil {
		return nil, err
	}
	if ls.state, err = transport.GenerateState(); err != nil {
		return nil, err
	}
	if ls.authURL, err = ls.h.GetAuthorizationURL(ctx, ls.state, transport.GenerateCodeChallenge(ls.verifier)); err != nil {
		return nil, fmt.Errorf("build the authorization URL: %w", err)
	}
	return ls, nil
}

// client is the registered client as the credentials file keeps it.
func (ls *loginStart) client() *clientInfoJSON {
	return &clientInfoJSON{ClientID: ls.h.GetClientID(), ClientSecret: ls.h.GetClientSecret(), TokenEndpointAuthMethod: ls.h.GetTokenEndpointAuthMethod()}
}

// exchange trades the browser's code for tokens, stored with the client and
// redirect they are bound to.
func exchange(ctx context.Context, tokens *oauthTokens, h *transport.OAuthHandler, client *clientInfoJSON, redirect, code, state, verifier string) error {
	if code == "" {
		return errors.New("the authorization server sent no code")
	}
	if err := tokens.update(func(e *storedCredential) {
		e.ClientInfo, e.RedirectURI, e.Tokens = client, redirect, nil
	}); err != nil {
		return err
	}
	if err := h.ProcessAuthorizationResponse(ctx, code, state, verifier); err != nil {
		return fmt.Errorf("exchange the authorization code: %w", err)
	}
	return nil
}

// callbackError is the authorization server's refusal in a callback's query, "" for none.
func callbackError(q url.Values) string {
	msg := q.Get("error")
	if d := q.Get("error_description"); d != "" {
		msg += ": " + d
	}
	return msg
}

// Login runs the browser authorization of one remote server with its own
// callback: it registers a client dynamically, listens on listenAddr
// (127.0.0.1, port 0 picks one), hands the authorization URL to show, and
// stores the tokens (0600) once the browser comes back. It blocks until
// then, the context ends or loginTimeout passes.
func Login(ctx context.Context, home, name string, cfg config.MCPServer, listenAddr string, show func(authURL string)) error {
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
	ctx, cancel := context.WithTimeout(ctx, loginTimeout)
	defer cancel()
	ls, err := startLogin(ctx, home, name, cfg, fmt.Sprintf("http://%s%s", ln.Addr().String(), OAuthCallbackPath))
	if err != nil {
		return err
	}

	got := make(chan url.Values, 1)
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+OAuthCallbackPath, func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("state") != ls.state { // a stray or forged request must not end the wait
			http.Error(w, "This is not the authorization nanobot is waiting for.", http.StatusBadRequest)
			return
		}
		select {
		case got <- q:
		default:
		}
		writeCallbackPage(w, name, callbackError(q))
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

	show(ls.authURL)
	var q url.Values
	select {
	case q = <-got:
	case <-ctx.Done():
		return fmt.Errorf("no authorization arrived at %s: %w", ls.redirect, ctx.Err())
	}
	if msg := callbackError(q); msg != "" {
		return fmt.Errorf("the authorization server refused: %s", msg)
	}
	return exchange(ctx, ls.tokens, ls.h, ls.client(), ls.redirect, q.Get("code"), ls.state, ls.verifier)
}

// writeCallbackPage tells the browser how the authorization ended.
func writeCallbackPage(w http.ResponseWriter, name, refusal string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if refusal != "" {
		fmt.Fprintf(w, "<p>Authorization of %s failed: %s</p>", html.EscapeString(name), html.EscapeString(refusal))
		return
	}
	fmt.Fprintf(w, "<p>nanobot is authorized for %s. You can close this tab.</p>", html.EscapeString(name))
}

// sameState compares states in constant time.
func sameState(a, b string) bool {
	return a != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}
