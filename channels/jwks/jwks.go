// Package jwks keeps the signing keys an OpenID provider publishes (its
// metadata's jwks_uri), for the channels whose platform signs the requests
// it sends the bot (Teams' Bot Connector): fetched on first use, again
// after a day, and at most once a minute for a key id it does not know.
package jwks

import (
	"context"
	"crypto/rsa"
	"encoding/base64"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/nanobot-durable/nanobot/channels"
)

// Timing of the keys.
const (
	keysFor    = 24 * time.Hour // keys are fetched again after this
	keysAtMost = time.Minute    // an unknown kid fetches them again at most this often
)

// Keys are the RSA keys of one provider, by key id.
type Keys struct {
	// Metadata is the provider's OpenID configuration URL.
	Metadata string
	API      *channels.API // without credentials

	mu      sync.Mutex
	keys    map[string]*rsa.PublicKey
	fetched time.Time
}

// Key is the signing key kid names, from the keys held or fetched anew.
func (k *Keys) Key(ctx context.Context, kid string) (*rsa.PublicKey, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if key := k.keys[kid]; key != nil && time.Since(k.fetched) < keysFor {
		return key, nil
	}
	if k.keys != nil && time.Since(k.fetched) < keysAtMost {
		return nil, fmt.Errorf("no signing key %q", kid)
	}
	keys, err := k.fetch(ctx)
	if err != nil {
		return nil, fmt.Errorf("signing keys: %w", err)
	}
	k.keys, k.fetched = keys, time.Now()
	if key := keys[kid]; key != nil {
		return key, nil
	}
	return nil, fmt.Errorf("no signing key %q", kid)
}

// fetch reads the OpenID metadata, then its key set.
func (k *Keys) fetch(ctx context.Context) (map[string]*rsa.PublicKey, error) {
	var meta struct {
		JWKSURI string `json:"jwks_uri"`
	}
	if err := k.API.Call(ctx, http.MethodGet, k.Metadata, nil, &meta); err != nil {
		return nil, err
	}
	if meta.JWKSURI == "" {
		return nil, fmt.Errorf("%s names no jwks_uri", k.Metadata)
	}
	var set struct {
		Keys []struct {
			Kty string `json:"kty"`
			Kid string `json:"kid"`
			N   string `json:"n"`
			E   string `json:"e"`
		} `json:"keys"`
	}
	if err := k.API.Call(ctx, http.MethodGet, meta.JWKSURI, nil, &set); err != nil {
		return nil, err
	}
	keys := map[string]*rsa.PublicKey{}
	for _, key := range set.Keys {
		n, errN := base64.RawURLEncoding.DecodeString(key.N)
		e, errE := base64.RawURLEncoding.DecodeString(key.E)
		if key.Kty != "RSA" || key.Kid == "" || errN != nil || errE != nil || len(e) == 0 || len(e) > 4 {
			continue // not a key this check can use
		}
		keys[key.Kid] = &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%s holds no RSA key", meta.JWKSURI)
	}
	return keys, nil
}

// Bearer checks the bearer token of an Authorization header and decodes it
// into claims: RS256, signed by one of the keys, from issuer for audience,
// and not expired, within leeway of clock skew.
func (k *Keys) Bearer(ctx context.Context, header string, claims jwt.Claims, issuer, audience string, leeway time.Duration) error {
	raw, ok := strings.CutPrefix(header, "Bearer ")
	if !ok || strings.TrimSpace(raw) == "" {
		return errors.New("no bearer token")
	}
	_, err := jwt.ParseWithClaims(strings.TrimSpace(raw), claims, func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		return k.Key(ctx, kid)
	}, jwt.WithValidMethods([]string{"RS256"}), jwt.WithIssuer(issuer), jwt.WithAudience(audience),
		jwt.WithExpirationRequired(), jwt.WithLeeway(leeway))
	return err
}
