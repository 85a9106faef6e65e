package jwks

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
)

// TestKeysAreFetchedOnceAndAnUnknownKidIsRefused: the metadata leads to the
// key set, a known kid is served from memory, and an unknown one does not
// fetch the keys again within the minute.
func TestKeysAreFetchedOnceAndAnUnknownKidIsRefused(t *testing.T) {
	priv, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	var fetches atomic.Int32
	mux := http.NewServeMux()
	var srv *httptest.Server
	mux.HandleFunc("/meta", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]string{"jwks_uri": srv.URL + "/keys"})
	})
	mux.HandleFunc("/keys", func(w http.ResponseWriter, _ *http.Request) {
		fetches.Add(1)
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": []map[string]string{
			{"kty": "EC", "kid": "ec"},
			{"kty": "RSA", "kid": "k1", "n": base64.RawURLEncoding.EncodeToString(priv.N.Bytes()),
				"e": base64.RawURLEncoding.EncodeToString(big.NewInt(int64(priv.E)).Bytes())},
		}})
	})
	srv = httptest.NewServer(mux)
	defer srv.Close()
	keys := &Keys{Metadata: srv.URL + "/meta", API: &channels.API{Name: "test", HTTP: srv.Client()}}

	got, err := keys.Key(context.Background(), "k1")
	require.NoError(t, err)
	require.True(t, priv.PublicKey.Equal(got))
	_, err = keys.Key(context.Background(), "k1")
	require.NoError(t, err)
	_, err = keys.Key(context.Background(), "ec")
	require.ErrorContains(t, err, `no signing key "ec"`, "only RSA keys are kept")
	require.EqualValues(t, 1, fetches.Load(), "fetched once")
}

// TestBearerChecksSignatureIssuerAudienceAndExpiry: a token the key signed
// for the audience holds; a forged, expired, foreign or missing one does not.
func TestBearerChecksSignatureIssuerAudienceAndExpiry(t *testing.T) {
	priv, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	forger, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/meta" {
			_ = json.NewEncoder(w).Encode(map[string]string{"jwks_uri": srv.URL + "/keys"})
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": []map[string]string{{"kty": "RSA", "kid": "k1",
			"n": base64.RawURLEncoding.EncodeToString(priv.N.Bytes()), "e": base64.RawURLEncoding.EncodeToString(big.NewInt(int64(priv.E)).Bytes())}}})
	}))
	defer srv.Close()
	keys := &Keys{Metadata: srv.URL + "/meta", API: &channels.API{Name: "test", HTTP: srv.Client()}}
	sign := func(key *rsa.PrivateKey, iss, aud string, exp time.Duration) string {
		tok := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.RegisteredClaims{Issuer: iss, Audience: jwt.ClaimStrings{aud},
			ExpiresAt: jwt.NewNumericDate(time.Now().Add(exp))})
		tok.Header["kid"] = "k1"
		raw, err := tok.SignedString(key)
		require.NoError(t, err)
		return "Bearer " + raw
	}
	check := func(header string) error {
		var claims jwt.RegisteredClaims
		return keys.Bearer(context.Background(), header, &claims, "issuer", "app", time.Minute)
	}
	require.NoError(t, check(sign(priv, "issuer", "app", time.Hour)))
	require.NoError(t, check(sign(priv, "issuer", "app", -30*time.Second)), "within the leeway")
	require.ErrorContains(t, check(sign(priv, "issuer", "app", -time.Hour)), "expired")
	require.ErrorContains(t, check(sign(forger, "issuer", "app", time.Hour)), "signature")
	require.ErrorContains(t, check(sign(priv, "someone", "app", time.Hour)), "issuer")
	require.ErrorContains(t, check(sign(priv, "issuer", "other", time.Hour)), "audience")
	require.ErrorContains(t, check(""), "no bearer token")
}
