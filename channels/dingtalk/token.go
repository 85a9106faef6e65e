package dingtalk

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/nanobot-durable/nanobot/channels"
)

// tokenPath issues the app's access token (POST appKey and appSecret).
const tokenPath = "/v1.0/oauth2/accessToken"

// fetchToken asks DingTalk for the app's access token (cached by c.tokens).
func (c *Channel) fetchToken(ctx context.Context) (channels.Token, error) {
	var out struct {
		AccessToken string `json:"accessToken"`
		ExpireIn    int    `json:"expireIn"`
	}
	body := map[string]string{"appKey": c.cfg.ClientID, "appSecret": c.cfg.ClientSecret}
	if err := c.public.Call(ctx, http.MethodPost, tokenPath, body, &out); err != nil {
		return channels.Token{}, fmt.Errorf("dingtalk access token: %w", err)
	}
	if out.AccessToken == "" {
		return channels.Token{}, errors.New("dingtalk access token: the answer has no accessToken")
	}
	if out.ExpireIn <= 0 {
		out.ExpireIn = 7200
	}
	return channels.Token{Value: out.AccessToken, TTL: time.Duration(out.ExpireIn) * time.Second}, nil
}
