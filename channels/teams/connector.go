package teams

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
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
	http   *http.Client
	tokens channels.TokenCache
}

func newConnector(cfg Config, hc *http.Client, s *secrets.Set) *connector {
	c := &connector{cfg: cfg, http: hc}
	c.tokens = channels.TokenCache{Fetch: c.fetchToken, Secrets: s}
	return c
}

// fetchToken asks AAD for the bot's token (the client-credentials grant).
func (c *connector) fetchToken(ctx context.Context) (channels.Token, error) {
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {c.cfg.AppID},
		"client_secret": {c.cfg.AppPassword}, "scope": {botScope}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.cfg.tokenURL(), strings.NewReader(form.Encode()))
	if err != nil {
		return channels.Token{}, fmt.Errorf("msteams token: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	var out struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int    `json:"expires_in"`
	}
	if _, err := call(c.http, req, &out); err != nil {
		return channels.Token{}, fmt.Errorf("msteams token from %s: %w", c.cfg.tokenURL(), err)
	}
	if out.AccessToken == "" {
		return channels.Token{}, errors.New("msteams token: the answer has no access_token")
	}
	return channels.Token{Value: out.AccessToken, TTL: time.Duration(max(out.ExpiresIn, 60)) * time.Second}, nil
}

// send posts an activity to a conversation (PUT over activityID when it
// is set) and returns the activity's id.
func (c *connector) send(ctx context.Context, serviceURL, conversation, activityID string, activity map[string]any) (string, error) {
	body, err := json.Marshal(activity)
	if err != nil {
		return "", err
	}
	method, path := http.MethodPost, "/v3/conversations/"+url.PathEscape(conversation)+"/activities"
	if activityID != "" {
		method, path = http.MethodPut, path+"/"+url.PathEscape(activityID)
	}
	token, err := c.tokens.Get(ctx)
	if err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(serviceURL, "/")+path, bytes.NewReader(body))
	if err != nil {
		return "", &channels.SendError{Err: err, Permanent: true}
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	var out struct {
		ID string `json:"id"`
	}
	status, err := call(c.http, req, &out)
	var se *channels.SendError
	if status == http.StatusUnauthorized && errors.As(err, &se) {
		c.tokens.Invalidate(token)
		se.Permanent = false // the next attempt fetches a new token
	}
	if err != nil {
		return "", fmt.Errorf("msteams %s %s: %w", method, path, err)
	}
	if out.ID == "" {
		out.ID = activityID
	}
	return out.ID, nil
}

// call sends req and decodes a JSON answer into out. A 429 waits its
// Retry-After; another 4xx is permanent; a 5xx or the network is retried.
func call(hc *http.Client, req *http.Request, out any) (status int, err error) {
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode >= 300 {
		err := fmt.Errorf("answered %s %s", resp.Status, strings.TrimSpace(string(data)))
		switch {
		case resp.StatusCode == http.StatusTooManyRequests:
			wait, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
			return resp.StatusCode, &channels.SendError{Err: err, RetryAfter: time.Duration(max(wait, 1)) * time.Second}
		case resp.StatusCode >= 400 && resp.StatusCode < 500:
			return resp.StatusCode, &channels.SendError{Err: err, Permanent: true}
		}
		return resp.StatusCode, err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return resp.StatusCode, nil
	}
	return resp.StatusCode, json.Unmarshal(data, out)
}
