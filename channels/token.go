package channels

import (
	"context"
	"sync"
	"time"

	"github.com/nanobot-durable/nanobot/secrets"
)

// Token is an access token a platform handed out, and how long it lives.
type Token struct {
	Value string
	TTL   time.Duration
}

// TokenCache keeps a channel's app access token (QQ's, DingTalk's,
// Feishu's tenant token, Teams' AAD token): fetched on first use, renewed
// before it runs out, one fetch at a time, and masked in the logs.
type TokenCache struct {
	// Fetch asks the platform for a new token.
	Fetch func(ctx context.Context) (Token, error)
	// Margin is how long before expiry a token is renewed (default a
	// minute; a token living less than twice that is renewed halfway).
	Margin time.Duration
	// Secrets masks each token fetched (nil: not masked).
	Secrets *secrets.Set

	mu      sync.Mutex
	value   string
	renewAt time.Time
}

// Get is a token valid for a while yet.
func (c *TokenCache) Get(ctx context.Context) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.value != "" && time.Now().Before(c.renewAt) {
		return c.value, nil
	}
	tok, err := c.Fetch(ctx)
	if err != nil {
		return "", err
	}
	if c.Secrets != nil {
		c.Secrets.Add(tok.Value) // before any log line could carry it
	}
	margin := c.Margin
	if margin <= 0 {
		margin = time.Minute
	}
	c.value = tok.Value
	c.renewAt = time.Now().Add(tok.TTL - min(margin, tok.TTL/2))
	return c.value, nil
}

// Invalidate drops value if it is still the cached token (the platform
// refused it before its time), so the next Get fetches anew.
func (c *TokenCache) Invalidate(value string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.value == value {
		c.value = ""
	}
}
