package channels

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReadJSONBoundsTheBody: a body within the limit is decoded; a larger
// one is refused as too large, a broken one as not JSON.
func TestReadJSONBoundsTheBody(t *testing.T) {
	read := func(body string) (map[string]string, error) {
		var v map[string]string
		err := ReadJSON(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body)), 16, &v)
		return v, err
	}
	v, err := read(`{"a":"b"}`)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"a": "b"}, v)
	_, err = read(`{"a":"` + strings.Repeat("x", 20) + `"}`)
	var tooLarge *http.MaxBytesError
	require.True(t, errors.As(err, &tooLarge), "%v", err)
	_, err = read(`{"a":`)
	require.Error(t, err)
}

// TestEndpointListensUntilShutdown: before Listen it names the configured
// address and has nothing to stop; listening, it names the port it got,
// serves the handler to its own Host and refuses another; after Shutdown
// nothing answers there.
func TestEndpointListensUntilShutdown(t *testing.T) {
	e := NewEndpoint("test endpoint", "127.0.0.1", 0, Hosts{Allowed: []string{"bot.example"}, Setting: "test.allowedHosts"})
	require.Equal(t, "127.0.0.1:0", e.Addr())
	require.NoError(t, e.Shutdown(t.Context()))
	require.NoError(t, e.Listen(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("hi")) }), slog.Default()))
	addr := e.Addr()
	require.NotEqual(t, "127.0.0.1:0", addr)
	get := func(host string) (int, string) {
		req, err := http.NewRequest(http.MethodGet, "http://"+addr+"/", nil)
		require.NoError(t, err)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	status, body := get("bot.example")
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "hi", body)
	status, _ = get("evil.example")
	require.Equal(t, http.StatusMisdirectedRequest, status)
	require.NoError(t, e.Shutdown(t.Context()))
	_, err := http.Get("http://" + addr + "/")
	require.Error(t, err)
}
