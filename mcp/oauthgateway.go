package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"

	"github.com/nanobot-durable/nanobot/config"
)

// pendingLogin is what the gateway needs to finish a login whose browser
// comes back to it; the login command waits for its Result. It lives in the
// credentials file (0600): the verifier is a secret until it is used.
type pendingLogin struct {
	State       string          `json:"state"`
	Verifier    string          `json:"verifier"`
	RedirectURI string          `json:"redirect_uri"`
	Client      *clientInfoJSON `json:"client"`
	Expires     time.Time       `json:"expires"`
	// Taken: the gateway took the callback (a state is good once).
	Taken bool `json:"taken,omitempty"`
	// Result is loginOK or why the login failed; "" while the browser is out.
	Result string `json:"result,omitempty"`
}

const loginOK = "ok"

// loginPoll is how often the login command looks for the gateway's result.
const loginPoll = 200 * time.Millisecond

// ErrNoPendingLogin: a callback whose state names no login under way (stray, forged, expired or used).
var ErrNoPendingLogin = errors.New("this is not an authorization nanobot is waiting for")

// LoginViaGateway is Login with the browser coming back to the running
// gateway's callback at gatewayURL (its web chat) instead of a listener
// of its own: the gateway exchanges the code, and this waits for the tokens.
func LoginViaGateway(ctx context.Context, home, name string, cfg config.MCPServer, gatewayURL string, show func(authURL string)) error {
	ctx, cancel := context.WithTimeout(ctx, loginTimeout)
	defer cancel()
	ls, err := startLogin(ctx, home, name, cfg, strings.TrimRight(gatewayURL, "/")+OAuthCallbackPath)
	if err != nil {
		return err
	}
	if err := ls.tokens.update(func(e *storedCredential) {
		e.Pending = &pendingLogin{State: ls.state, Verifier: ls.verifier, RedirectURI: ls.redirect, Client: ls.client(), Expires: time.Now().Add(loginTimeout)}
	}); err != nil {
		return err
	}
	defer ls.tokens.update(func(e *storedCredential) { e.Pending = nil }) //nolint:errcheck // a leftover expires
	show(ls.authURL)
	tick := time.NewTicker(loginPoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("no authorization arrived at %s: %w", ls.redirect, ctx.Err())
		case <-tick.C:
		}
		e, err := ls.tokens.entry()
		if err != nil {
			return err
		}
		if e == nil || e.Pending == nil || e.Pending.State != ls.state {
			return errors.New("the login was replaced by another one for the same server")
		}
		switch r := e.Pending.Result; r {
		case "":
		case loginOK:
			return nil
		default:
			return errors.New(r)
		}
	}
}

// CompleteLogin finishes, on the gateway, the login its callback's query
// names by state: the code is exchanged and the tokens stored, and the
// waiting login command is told. It returns the server's name.
func CompleteLogin(ctx context.Context, home string, servers map[string]config.MCPServer, q url.Values) (string, error) {
	name, p, err := takePending(home, servers, q.Get("state"))
	if err != nil {
		return "", err
	}
	cfg := servers[name]
	tokens := newOAuthTokens(home, name, cfg.URL)
	result := loginOK
	if refusal := callbackError(q); refusal != "" {
		err = fmt.Errorf("the authorization server refused: %s", refusal)
	} else {
		err = exchangePending(ctx, tokens, cfg, p, q.Get("code"))
	}
	if err != nil {
		result = err.Error()
	}
	if uerr := tokens.update(func(e *storedCredential) {
		if e.Pending != nil && e.Pending.State == p.State {
			e.Pending.Result = result
		}
	}); uerr != nil {
		return name, errors.Join(err, uerr)
	}
	return name, err
}

// takePending finds the live login of state and marks it taken.
func takePending(home string, servers map[string]config.MCPServer, state string) (string, pendingLogin, error) {
	for name, cfg := range servers {
		if cfg.Auth != AuthOAuth {
			continue
		}
		tokens := newOAuthTokens(home, name, cfg.URL)
		if e, err := tokens.entry(); err != nil || e == nil || e.Pending == nil || !sameState(e.Pending.State, state) {
			continue // read first: no write for the servers not asked about
		}
		var found pendingLogin
		ok := false
		err := tokens.update(func(e *storedCredential) {
			p := e.Pending
			if p != nil && !p.Taken && sameState(p.State, state) && time.Now().Before(p.Expires) {
				p.Taken, found, ok = true, *p, true
			}
		})
		if err != nil {
			return "", pendingLogin{}, err
		}
		if ok {
			return name, found, nil
		}
	}
	return "", pendingLogin{}, ErrNoPendingLogin
}

func exchangePending(ctx context.Context, tokens *oauthTokens, cfg config.MCPServer, p pendingLogin, code string) error {
	if p.Client == nil {
		return errors.New("the pending login names no client")
	}
	h := transport.NewOAuthHandler(transport.OAuthConfig{
		ClientID: p.Client.ClientID, ClientSecret: p.Client.ClientSecret, TokenEndpointAuthMethod: p.Client.TokenEndpointAuthMethod,
		RedirectURI: p.RedirectURI, TokenStore: tokens, PKCEEnabled: true,
	})
	base, err := discoveryURL(cfg.URL)
	if err != nil {
		return err
	}
	h.SetBaseURL(base)
	h.SetExpectedState(p.State)
	return exchange(ctx, tokens, h, p.Client, p.RedirectURI, code, p.State, p.Verifier)
}

// CallbackHandler serves OAuthCallbackPath on the gateway. It takes no
// token: the browser arrives from the authorization server, and the
// single-use state, unguessable and bound to one login, is what admits it.
func CallbackHandler(home string, servers func() map[string]config.MCPServer) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			w.Header().Set("Allow", http.MethodGet)
			http.Error(w, "use GET", http.StatusMethodNotAllowed)
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), time.Minute)
		defer cancel()
		name, err := CompleteLogin(ctx, home, servers(), r.URL.Query())
		switch {
		case errors.Is(err, ErrNoPendingLogin):
			http.Error(w, "This is not an authorization nanobot is waiting for.", http.StatusBadRequest)
		case err != nil:
			writeCallbackPage(w, name, err.Error())
		default:
			writeCallbackPage(w, name, "")
		}
	}
}
