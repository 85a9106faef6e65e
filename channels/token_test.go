package channels

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/secrets"
)

func TestTokenCacheFetchesOnceRenewsAndMasks(t *testing.T) {
	var mu sync.Mutex
	fetches := 0
	ttl := time.Hour
	mask := &secrets.Set{}
	c := &TokenCache{Secrets: mask, Fetch: func(context.Context) (Token, error) {
		mu.Lock()
		defer mu.Unlock()
		fetches++
		return Token{Value: fmt.Sprintf("access-token-%d", fetches), TTL: ttl}, nil
	}}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			tok, err := c.Get(context.Background())
			require.NoError(t, err)
			require.Equal(t, "access-token-1", tok)
		})
	}
	wg.Wait()
	require.Equal(t, 1, fetches, "one fetch for callers at once")
	require.Equal(t, secrets.Mask, mask.Redact("access-token-1"), "masked in the logs")

	c.Invalidate("access-token-0") // an older token refused: the cached one stays
	tok, _ := c.Get(context.Background())
	require.Equal(t, "access-token-1", tok)
	c.Invalidate("access-token-1")
	tok, _ = c.Get(context.Background())
	require.Equal(t, "access-token-2", tok, "a refused token is fetched anew")

	ttl = 0 // a token that dies at once is renewed on every use
	c.Invalidate("access-token-2")
	tok, _ = c.Get(context.Background())
	require.Equal(t, "access-token-3", tok)
	tok, _ = c.Get(context.Background())
	require.Equal(t, "access-token-4", tok)
}

func TestTokenCacheKeepsNoFailure(t *testing.T) {
	fail := true
	c := &TokenCache{Fetch: func(context.Context) (Token, error) {
		if fail {
			return Token{}, errors.New("bad secret")
		}
		return Token{Value: "ok", TTL: time.Hour}, nil
	}}
	_, err := c.Get(context.Background())
	require.ErrorContains(t, err, "bad secret")
	fail = false
	tok, err := c.Get(context.Background())
	require.NoError(t, err)
	require.Equal(t, "ok", tok)
}
