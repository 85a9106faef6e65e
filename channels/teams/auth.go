package teams

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

// botIssuer is who signs the tokens of the Bot Connector's requests.
const botIssuer = "https://api.botframework.com"

// Timing of the connector's signing keys.
const (
	keysFor     = 24 * time.Hour  // keys are fetched again after this
	keysAtMost  = time.Minute     // an unknown kid fetches them again at most this often
	clockLeeway = 5 * time.Minute // the skew the Bot Framework allows
)

// verifier checks the bearer token of an inbound activity: RS256, signed
// by a key of the connector's OpenID metadata, issued by the connector
// for this app, not expired, and naming the activity's serviceUrl.
type verifier struct {
	metadata string
	appID    string
	api      *channels.API

	mu      sync.Mutex
	keys    map[string]*rsa.PublicKey
	fetched time.Time
}

// tokenClaims are the claims read beside the registered ones.
type tokenClaims struct {
	jwt.RegisteredClaims
	ServiceURL string `json:"serviceurl"`
}

// check is nil when header carries a token the connector issued for this
// bot, for an activity whose serviceUrl is serviceURL.
func (v *verifier) check(ctx context.Context, header, serviceURL string) error {
	raw, ok := strings.CutPrefix(header, "Bearer ")
	if !ok || strings.TrimSpace(raw) == "" {
		return errors.New("no bearer token")
	}
	var claims tokenClaims
	_, err := jwt.ParseWithClaims(strings.TrimSpace(raw), &claims, func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		return v.key(ctx, kid)
	}, jwt.WithValidMethods([]string{"RS256"}), jwt.WithIssuer(botIssuer), jwt.WithAudience(v.appID),
		jwt.WithExpirationRequired(), jwt.WithLeeway(clockLeeway))
	if err != nil {
		return err
	}
	if claims.ServiceURL != "" && claims.ServiceURL != serviceURL {
		return fmt.Errorf("token is for serviceUrl %q, the activity names %q", claims.ServiceURL, serviceURL)
	}
	return nil
}

// key is the signing key kid names, from the keys held or fetched anew.
func (v *verifier) key(ctx context.Context, kid string) (*rsa.PublicKey, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if k := v.keys[kid]; k != nil && time.Since(v.fetched) < keysFor {
		return k, nil
	}
	if v.keys != nil && time.Since(v.fetched) < keysAtMost {
		return nil, fmt.Errorf("no signing key %q", kid)
	}
	keys, err := v.fetch(ctx)
	if err != nil {
		return nil, fmt.Errorf("signing keys: %w", err)
	}
	v.keys, v.fetched = keys, time.Now()
	if k := keys[kid]; k != nil {
		return k, nil
	}
	return nil, fmt.Errorf("no signing key %q", kid)
}

// fetch reads the OpenID metadata, then its key set.
func (v *verifier) fetch(ctx context.Context) (map[string]*rsa.PublicKey, error) {
	var meta struct {
		JWKSURI string `json:"jwks_uri"`
	}
	if err := v.api.Call(ctx, http.MethodGet, v.metadata, nil, &meta); err != nil {
		return nil, err
	}
	if meta.JWKSURI == "" {
		return nil, fmt.Errorf("%s names no jwks_uri", v.metadata)
	}
	var set struct {
		Keys []struct {
			Kty string `json:"kty"`
			Kid string `json:"kid"`
			N   string `json:"n"`
			E   string `json:"e"`
		} `json:"keys"`
	}
	if err := v.api.Call(ctx, http.MethodGet, meta.JWKSURI, nil, &set); err != nil {
		return nil, err
	}
	keys := map[string]*rsa.PublicKey{}
	for _, k := range set.Keys {
		n, errN := base64.RawURLEncoding.DecodeString(k.N)
		e, errE := base64.RawURLEncoding.DecodeString(k.E)
		if k.Kty != "RSA" || k.Kid == "" || errN != nil || errE != nil || len(e) == 0 || len(e) > 4 {
			continue // not a key this check can use
		}
		keys[k.Kid] = &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%s holds no RSA key", meta.JWKSURI)
	}
	return keys, nil
}
