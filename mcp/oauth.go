package mcp

import (
	"errors"
	"fmt"
	"net/url"
	"time"

	mcpclient "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"

	"github.com/nanobot-durable/nanobot/config"
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

// errNeedsLogin: a server with "auth": "oauth" and no stored tokens.
var errNeedsLogin = errors.New("the server needs an OAuth login")

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
		return transport.OAuthConfig{}, fmt.Errorf("%w: run `nanobot mcp login %s`", errNeedsLogin, name)
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
