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
