package channels

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestAPIJudgesRefusals: a 429 waits what the platform asked, a 4xx is
// permanent, a 5xx is retried; the answer's body names the refusal.
func TestAPIJudgesRefusals(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		status, _ := strconv.Atoi(r.URL.Path[1:])
		w.Header().Set("X-Reset", "7")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, `{"message":"no"}`)
	}))
	defer srv.Close()
	api := &API{Name: "peer", Base: srv.URL, HTTP: srv.Client(), RetryAfterHeader: "X-Reset"}
	ctx := context.Background()

	var se *SendError
	err := api.Call(ctx, http.MethodGet, "/429", nil, nil)
	require.ErrorAs(t, err, &se)
	require.Equal(t, 7*time.Second, se.RetryAfter)
	require.False(t, se.Permanent)

	err = api.Call(ctx, http.MethodPost, "/403", map[string]string{"a": "b"}, nil)
	require.True(t, IsPermanent(err))
	require.Equal(t, http.StatusForbidden, StatusOf(err))
	require.ErrorContains(t, err, `peer POST /403: HTTP 403: {"message":"no"}`)

	err = api.Call(ctx, http.MethodGet, "/503", nil, nil)
	require.False(t, IsPermanent(err))
	var plain *SendError
	require.False(t, errors.As(err, &plain), "a 5xx is retried with backoff")
	require.Equal(t, http.StatusServiceUnavailable, StatusOf(err))

	var out struct{ Message string }
	require.NoError(t, api.Call(ctx, http.MethodGet, "/200", nil, &out))
	require.Equal(t, "no", out.Message)
}

// TestAPIRenewsARefusedToken: a 401 drops the cached token; with
// RetryRefused the call is made again at once with a new one, else the
// error is one delivery retries (and its next attempt gets the new token).
func TestAPIRenewsARefusedToken(t *testing.T) {
	var issued, revoked atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bot t"+strconv.FormatInt(issued.Load(), 10) || revoked.Load() == issued.Load() {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		_, _ = io.WriteString(w, `{}`)
	}))
	defer srv.Close()
	tokens := &TokenCache{Fetch: func(context.Context) (Token, error) {
		return Token{Value: "t" + strconv.FormatInt(issued.Add(1), 10), TTL: time.Hour}, nil
	}}
	api := &API{Name: "peer", Base: srv.URL, HTTP: srv.Client(), Tokens: tokens, Scheme: "Bot"}
	ctx := context.Background()
	require.NoError(t, api.Call(ctx, http.MethodGet, "/", nil, nil))

	revoked.Store(issued.Load())
	err := api.Call(ctx, http.MethodGet, "/", nil, nil)
	var se *SendError
	require.ErrorAs(t, err, &se)
	require.False(t, se.Permanent, "the next attempt takes a new token")
	require.NoError(t, api.Call(ctx, http.MethodGet, "/", nil, nil))
	require.EqualValues(t, 2, issued.Load())

	api.RetryRefused = true
	revoked.Store(issued.Load())
	require.NoError(t, api.Call(ctx, http.MethodGet, "/", nil, nil), "renewed and made again at once")
	require.EqualValues(t, 3, issued.Load())
}

// TestAPIReadsThePlatformsEnvelope: a 2xx whose body carries an error code
// is a refusal, judged like any other; a code that refuses the token
// renews it as a 401 would.
func TestAPIReadsThePlatformsEnvelope(t *testing.T) {
	var issued atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/stale" && r.Header.Get("Authorization") == "Bearer t1":
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"code":77}`)
		case r.URL.Path == "/refused":
			_, _ = io.WriteString(w, `{"code":5,"msg":"no"}`)
		default:
			_, _ = io.WriteString(w, `{"code":0,"data":"ok"}`)
		}
	}))
	defer srv.Close()
	tokens := &TokenCache{Fetch: func(context.Context) (Token, error) {
		return Token{Value: "t" + strconv.FormatInt(issued.Add(1), 10), TTL: time.Hour}, nil
	}}
	envelope := func(_ int, body []byte) (string, bool) {
		var env struct{ Code int }
		if json.Unmarshal(body, &env) != nil || env.Code == 0 {
			return "", false
		}
		return strconv.Itoa(env.Code), env.Code == 77
	}
	api := &API{Name: "peer", Base: srv.URL, HTTP: srv.Client(), Tokens: tokens, RetryRefused: true, Envelope: envelope}
	ctx := context.Background()

	var out struct{ Data string }
	require.NoError(t, api.Call(ctx, http.MethodGet, "/stale", nil, &out), "the refused token was renewed")
	require.Equal(t, "ok", out.Data)
	require.EqualValues(t, 2, issued.Load())

	err := api.Call(ctx, http.MethodGet, "/refused", nil, &out)
	var he *HTTPError
	require.ErrorAs(t, err, &he)
	require.Equal(t, "5", he.Code)
	require.Equal(t, http.StatusOK, he.Status)
}

// TestAPIPutsTheTokenWhereThePlatformReadsIt: Authorization with a
// scheme, a header of the platform's own, or a query parameter; the
// platform's own headers beside it.
func TestAPIPutsTheTokenWhereThePlatformReadsIt(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode([]string{r.Header.Get("Authorization"), r.Header.Get("X-Token"), r.URL.Query().Get("access_token"), r.URL.Query().Get("type")})
	}))
	defer srv.Close()
	tokens := &TokenCache{Fetch: func(context.Context) (Token, error) { return Token{Value: "s3cret", TTL: time.Hour}, nil }}
	for _, tc := range []struct {
		api  API
		want []string
	}{
		{API{Scheme: "QQBot"}, []string{"QQBot s3cret", "", "", "x"}},
		{API{TokenHeader: "X-Token"}, []string{"", "s3cret", "", "x"}},
		{API{TokenQuery: "access_token"}, []string{"", "", "s3cret", "x"}},
		{API{Header: func(h http.Header) { h.Set("X-Token", "own") }}, []string{"Bearer s3cret", "own", "", "x"}},
	} {
		api := tc.api
		api.Name, api.Base, api.HTTP, api.Tokens = "peer", srv.URL, srv.Client(), tokens
		var got []string
		require.NoError(t, api.Call(context.Background(), http.MethodGet, "/?type=x", nil, &got))
		require.Equal(t, tc.want, got)
	}
}

// TestAPIDownloadSavesUnderMedia: a file answered with the token is saved
// under media/ by name; a refusal is judged (a 404 is permanent) and one
// over the limit is not kept.
func TestAPIDownloadSavesUnderMedia(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/files/f1" || r.Header.Get("Authorization") != "Bearer tok" {
			http.NotFound(w, r)
			return
		}
		_, _ = io.WriteString(w, "file body")
	}))
	defer srv.Close()
	api := &API{Name: "peer", Base: srv.URL, HTTP: srv.Client(), Token: "tok"}
	ws := t.TempDir()
	path, err := api.Download(t.Context(), "/files/f1", ws, "peer-f1-a.txt", 100)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(ws, "media", "peer-f1-a.txt"), path)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "file body", string(data))

	_, err = api.Download(t.Context(), "/files/gone", ws, "peer-gone", 100)
	require.True(t, IsPermanent(err), "%v", err)
	_, err = api.Download(t.Context(), "/files/f1", ws, "peer-big", 4)
	require.ErrorIs(t, err, ErrTooLarge)
	require.NoFileExists(t, filepath.Join(ws, "media", "peer-big"))
}

// TestFormHasFieldsThenTheFile: an upload's body reads back as its fields
// and one file part with its name, type and bytes.
func TestFormHasFieldsThenTheFile(t *testing.T) {
	body, ct, err := Form(map[string]string{"type": "image", "file_name": `a "b".png`}, FormFile{Field: "media", Name: `a "b".png`, Data: []byte("PNG")})
	require.NoError(t, err)
	mt, params, err := mime.ParseMediaType(ct)
	require.NoError(t, err)
	require.Equal(t, "multipart/form-data", mt)
	r := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	var names []string
	for {
		p, err := r.NextPart()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		data, err := io.ReadAll(p)
		require.NoError(t, err)
		names = append(names, p.FormName())
		switch p.FormName() {
		case "type":
			require.Equal(t, "image", string(data))
		case "file_name":
			require.Equal(t, `a "b".png`, string(data))
		case "media":
			require.Equal(t, `a "b".png`, p.FileName())
			require.Equal(t, "image/png", p.Header.Get("Content-Type"))
			require.Equal(t, "PNG", string(data))
		}
	}
	require.Equal(t, []string{"file_name", "type", "media"}, names, "fields in name order, then the file")

	_, _, err = Form(nil, FormFile{Field: "file", Name: "x", Type: "application/octet-stream"})
	require.NoError(t, err)
	body, ct, _ = Form(nil, FormFile{Field: "file", Name: "x.unknownext"})
	_, params, _ = mime.ParseMediaType(ct)
	p, err := multipart.NewReader(bytes.NewReader(body), params["boundary"]).NextPart()
	require.NoError(t, err)
	require.Equal(t, "application/octet-stream", p.Header.Get("Content-Type"))
}
