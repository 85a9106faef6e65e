package teams

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/secrets"
)

// botScope is what the bot's token is asked for: the Bot Connector API.
const botScope = "https://api.botframework.com/.default"

// connector is the Bot Connector REST API, with the bot's AAD token
// (client credentials), fetched on first use and again near its expiry or
// when the connector refuses it.
type connector struct {
	cfg    Config
	api    *channels.API // with the bot's token: activities
	public *channels.API // without: the token endpoint, the signing keys
	tokens channels.TokenCache
}

func newConnector(cfg Config, hc *http.Client, s *secrets.Set) *connector {
	c := &connector{cfg: cfg, public: &channels.API{Name: Name, HTTP: hc}}
	c.tokens = channels.TokenCache{Fetch: c.fetchToken, Secrets: s}
	c.api = &channels.API{Name: Name, HTTP: hc, Tokens: &c.tokens}
	return c
}

// fetchToken asks AAD for the bot's token (the client-credentials grant).
func (c *connector) fetchToken(ctx context.Context) (channels.Token, error) {
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {c.cfg.AppID},
		"client_secret": {c.cfg.AppPassword}, "scope": {botScope}}
	var out struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int    `json:"expires_in"`
	}
	if err := c.public.Send(ctx, http.MethodPost, c.cfg.tokenURL(), []byte(form.Encode()), "application/x-www-form-urlencoded", &out); err != nil {
		return channels.Token{}, fmt.Errorf("msteams token: %w", err)
	}
	if out.AccessToken == "" {
		return channels.Token{}, errors.New("msteams token: the answer has no access_token")
	}
	return channels.Token{Value: out.AccessToken, TTL: time.Duration(max(out.ExpiresIn, 60)) * time.Second}, nil
}

// send posts an activity to a conversation (PUT over activityID when it
// is set) and returns the activity's id.
func (c *connector) send(ctx context.Context, serviceURL, conversation, activityID string, activity map[string]any) (string, error) {
	method, path := http.MethodPost, "/v3/conversations/"+url.PathEscape(conversation)+"/activities"
	if activityID != "" {
		method, path = http.MethodPut, path+"/"+url.PathEscape(activityID)
	}
	var out struct {
		ID string `json:"id"`
	}
	if err := c.api.Call(ctx, method, strings.TrimSuffix(serviceURL, "/")+path, activity, &out); err != nil {
		return "", err
	}
	if out.ID == "" {
		out.ID = activityID
	}
	return out.ID, nil
}
