package qq

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/nanobot-durable/nanobot/channels"
)

// tokenPath is where app access tokens come from (QQ Bot API, "接口调用凭证").
const tokenPath = "/app/getAppAccessToken"

// errBadCredentials: QQ refused appId/secret; trying again cannot help.
var errBadCredentials = errors.New("qq refused channels.qq.appId/secret")

// fetchToken asks QQ for an app access token (cached by c.tokens).
func (c *Channel) fetchToken(ctx context.Context) (channels.Token, error) {
	var out struct {
		AccessToken string          `json:"access_token"`
		ExpiresIn   json.RawMessage `json:"expires_in"` // a string ("7200"), a number in some answers
		Code        int             `json:"code"`
		Message     string          `json:"message"`
	}
	auth := &channels.API{Name: Name, Base: c.cfg.authBase(), HTTP: c.http}
	err := auth.Call(ctx, http.MethodPost, tokenPath, map[string]string{"appId": c.cfg.AppID, "clientSecret": c.cfg.Secret}, &out)
	switch status := channels.StatusOf(err); {
	case err == nil && out.AccessToken == "":
		return channels.Token{}, fmt.Errorf("%w: qq access token: code %d: %s", errBadCredentials, out.Code, out.Message)
	case status >= 400 && status < 500:
		return channels.Token{}, fmt.Errorf("%w: qq access token: %w", errBadCredentials, err)
	case err != nil:
		return channels.Token{}, fmt.Errorf("qq access token: %w", err)
	}
	secs, err := strconv.Atoi(string(bytes.Trim(out.ExpiresIn, `"`)))
	if err != nil || secs <= 0 {
		secs = 7200 // QQ's documented lifetime
	}
	return channels.Token{Value: out.AccessToken, TTL: time.Duration(secs) * time.Second}, nil
}
