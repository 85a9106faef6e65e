package qq

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
	body, _ := json.Marshal(map[string]string{"appId": c.cfg.AppID, "clientSecret": c.cfg.Secret})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.cfg.authBase()+tokenPath, bytes.NewReader(body))
	if err != nil {
		return channels.Token{}, fmt.Errorf("qq access token: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return channels.Token{}, fmt.Errorf("qq access token: %w", err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var out struct {
		AccessToken string          `json:"access_token"`
		ExpiresIn   json.RawMessage `json:"expires_in"` // a string ("7200"), a number in some answers
		Code        int             `json:"code"`
		Message     string          `json:"message"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return channels.Token{}, fmt.Errorf("qq access token: HTTP %d, unreadable answer: %w", resp.StatusCode, err)
	}
	if out.AccessToken == "" {
		err := fmt.Errorf("qq access token: HTTP %d, code %d: %s", resp.StatusCode, out.Code, out.Message)
		if resp.StatusCode < 500 {
			err = fmt.Errorf("%w: %w", errBadCredentials, err)
		}
		return channels.Token{}, err
	}
	secs, err := strconv.Atoi(string(bytes.Trim(out.ExpiresIn, `"`)))
	if err != nil || secs <= 0 {
		secs = 7200 // QQ's documented lifetime
	}
	return channels.Token{Value: out.AccessToken, TTL: time.Duration(secs) * time.Second}, nil
}
