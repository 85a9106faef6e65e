package dingtalk

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// tokenPath issues the app's access token (POST appKey and appSecret).
const tokenPath = "/v1.0/oauth2/accessToken"

// tokenMargin is how long before its expiry a token is replaced, as in nanobot.
const tokenMargin = time.Minute

// accessTokens holds the app's access token, fetched on first use and
// again when it nears its expiry or DingTalk refuses it.
type accessTokens struct {
	c *Channel

	mu      sync.Mutex
	token   string
	expires time.Time
}

// get is a valid token, fetched if none is held.
func (t *accessTokens) get(ctx context.Context) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.token != "" && time.Now().Before(t.expires) {
		return t.token, nil
	}
	var out struct {
		AccessToken string `json:"accessToken"`
		ExpireIn    int    `json:"expireIn"`
	}
	body := map[string]string{"appKey": t.c.cfg.ClientID, "appSecret": t.c.cfg.ClientSecret}
	if err := t.c.postJSON(ctx, t.c.api+tokenPath, "", body, &out); err != nil {
		return "", fmt.Errorf("dingtalk access token: %w", err)
	}
	if out.AccessToken == "" {
		return "", errors.New("dingtalk access token: the answer has no accessToken")
	}
	t.c.secrets.Add(out.AccessToken) // before any log line could carry it
	if out.ExpireIn <= 0 {
		out.ExpireIn = 7200
	}
	t.token = out.AccessToken
	t.expires = time.Now().Add(time.Duration(out.ExpireIn)*time.Second - tokenMargin)
	return t.token, nil
}

// drop forgets a token DingTalk refused, so the next call fetches another.
func (t *accessTokens) drop(token string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.token == token {
		t.token = ""
	}
}
