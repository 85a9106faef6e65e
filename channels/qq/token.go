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
	"sync"
	"time"

	"github.com/nanobot-durable/nanobot/secrets"
)

// tokenPath is where app access tokens come from (QQ Bot API, "接口调用凭证").
const tokenPath = "/app/getAppAccessToken"

// refreshMargin is how long before its expiry a token is replaced.
const refreshMargin = 60 * time.Second

// tokens fetches and caches the app access token, fetching a new one before
// the old expires; one fetch at a time.
type tokens struct {
	url, appID, secret string
	http               *http.Client
	mask               *secrets.Set

	mu      sync.Mutex
	token   string
	renewAt time.Time
}

// get is a token valid for a while yet.
func (t *tokens) get(ctx context.Context) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.token != "" && time.Now().Before(t.renewAt) {
		return t.token, nil
	}
	tok, ttl, err := t.fetch(ctx)
	if err != nil {
		return "", err
	}
	t.token = tok
	// A short-lived token is renewed halfway; a usual one (7200 s) a minute early.
	t.renewAt = time.Now().Add(ttl - min(refreshMargin, ttl/2))
	return tok, nil
}

// invalidate drops the cached token (QQ refused it), so get fetches anew.
func (t *tokens) invalidate(tok string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.token == tok {
		t.token = ""
	}
}

// errBadCredentials: QQ refused appId/secret; trying again cannot help.
var errBadCredentials = errors.New("qq refused channels.qq.appId/secret")

func (t *tokens) fetch(ctx context.Context) (string, time.Duration, error) {
	body, _ := json.Marshal(map[string]string{"appId": t.appID, "clientSecret": t.secret})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.url, bytes.NewReader(body))
	if err != nil {
		return "", 0, fmt.Errorf("qq access token: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := t.http.Do(req)
	if err != nil {
		return "", 0, fmt.Errorf("qq access token: %w", err)
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
		return "", 0, fmt.Errorf("qq access token: HTTP %d, unreadable answer: %w", resp.StatusCode, err)
	}
	if out.AccessToken == "" {
		err := fmt.Errorf("qq access token: HTTP %d, code %d: %s", resp.StatusCode, out.Code, out.Message)
		if resp.StatusCode < 500 {
			err = fmt.Errorf("%w: %w", errBadCredentials, err)
		}
		return "", 0, err
	}
	if t.mask != nil {
		t.mask.Add(out.AccessToken) // before any log line could carry it
	}
	secs, err := strconv.Atoi(string(bytes.Trim(out.ExpiresIn, `"`)))
	if err != nil || secs <= 0 {
		secs = 7200 // QQ's documented lifetime
	}
	return out.AccessToken, time.Duration(secs) * time.Second, nil
}
