package peerkit

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestRecorderKeepsCallsAndLeavesTheBody(t *testing.T) {
	var rec Recorder
	var seen string
	srv := httptest.NewServer(rec.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		seen = string(b)
		WriteJSON(w, http.StatusCreated, map[string]string{"id": "1"})
	})))
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v2/users/u1/messages?x=1", strings.NewReader(`{"a":1}`))
	req.Header.Set("Authorization", "Bot t")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	require.Equal(t, `{"a":1}`, seen)
	require.Equal(t, []Call{{Method: "POST", Path: "/v2/users/u1/messages", Query: "x=1", Auth: "Bot t", Body: []byte(`{"a":1}`)}}, rec.Calls())
	require.Equal(t, 1, rec.CallsTo("POST", "/v2/users/"))
	require.Equal(t, 0, rec.CallsTo("GET", "/v2/users/"))
}

func TestTokensExpire(t *testing.T) {
	tokens := NewTokens("peer-token", time.Hour)
	a, ttl := tokens.Issue()
	require.Equal(t, time.Hour, ttl)
	require.True(t, tokens.Valid(a))
	require.True(t, tokens.ValidBearer("QQBot "+a, "QQBot"))
	require.False(t, tokens.ValidBearer("Bearer "+a, "QQBot"))
	require.False(t, tokens.Valid("forged"))
	tokens.SetTTL(0)
	b, _ := tokens.Issue()
	require.NotEqual(t, a, b)
	require.False(t, tokens.Valid(b), "issued already expired")
	tokens.Revoke()
	require.False(t, tokens.Valid(a))
	require.Len(t, tokens.Issued(), 2)
}

func TestFailuresAreGivenOnceToTheirMethodAndPath(t *testing.T) {
	var fs Failures
	fs.Add(Failure{Method: "POST", Path: "/v2/users/", Status: 429, Body: `{"code":1}`, Header: http.Header{"Retry-After": {"2"}}})
	fs.Add(Failure{Path: "/gateway", Status: 502})
	_, ok := fs.Take("GET", "/v2/users/u1/messages")
	require.False(t, ok, "another method")
	f, ok := fs.Take("POST", "/v2/users/u1/messages")
	require.True(t, ok)
	_, ok = fs.Take("POST", "/v2/users/u1/messages")
	require.False(t, ok, "given once")
	w := httptest.NewRecorder()
	f.Write(w)
	require.Equal(t, 429, w.Code)
	require.Equal(t, `{"code":1}`, w.Body.String())
	require.Equal(t, "2", w.Header().Get("Retry-After"))
	f, ok = fs.Take("DELETE", "/gateway/bot")
	require.True(t, ok, "any method")
	require.Equal(t, 502, f.Status)
}

func TestFilesServeWhatWasAddedAndNothingElse(t *testing.T) {
	var fs Files
	fs.Add("/cdn/a.png", []byte("png"), http.Header{"Content-Type": {"image/png"}})
	w := httptest.NewRecorder()
	fs.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/cdn/a.png?sig=x", nil))
	require.Equal(t, "png", w.Body.String())
	require.Equal(t, "image/png", w.Header().Get("Content-Type"))
	w = httptest.NewRecorder()
	fs.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/cdn/b.png", nil))
	require.Equal(t, http.StatusNotFound, w.Code)
}
