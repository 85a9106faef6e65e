package teams

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/secrets"
)

// botScope is what the bot's token is asked for: the Bot Connector API.
const botScope = "https://api.botframework.com/.default"

// newConnector is the Bot Connector REST API (api), with the bot's AAD
// token (client credentials), fetched on first use and again near its
// expiry or when the connector refuses it; public, without the token,
// reaches the token endpoint and the signing keys.
func newConnector(cfg Config, hc *http.Client, s *secrets.Set) (api, public *channels.API) {
	public = &channels.API{Name: Name, HTTP: hc}
	fetch := func(ctx context.Context) (channels.Token, error) { return fetchToken(ctx, public, cfg) }
	return &channels.API{Name: Name, HTTP: hc, Tokens: &channels.TokenCache{Fetch: fetch, Secrets: s}}, public
}

// fetchToken asks AAD for the bot's token (the client-credentials grant).
func fetchToken(ctx context.Context, public *channels.API, cfg Config) (channels.Token, error) {
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {cfg.AppID},
		"client_secret": {cfg.AppPassword}, "scope": {botScope}}
	var out struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int    `json:"expires_in"`
	}
	if err := public.Send(ctx, http.MethodPost, cfg.tokenURL(), []byte(form.Encode()), "application/x-www-form-urlencoded", &out); err != nil {
		return channels.Token{}, fmt.Errorf("msteams token: %w", err)
	}
	if out.AccessToken == "" {
		return channels.Token{}, errors.New("msteams token: the answer has no access_token")
	}
	return channels.Token{Value: out.AccessToken, TTL: time.Duration(max(out.ExpiresIn, 60)) * time.Second}, nil
}
