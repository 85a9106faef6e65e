package api

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
)

// TestAForeignHostGets421: a page rebound to this machine reaches none of
// the API, /health included; the names it is bound to do, and api.allowedHosts.
func TestAForeignHostGets421(t *testing.T) {
	_, p, url := startChannel(t, func(cfg *config.Config) { cfg.API.AllowedHosts = []string{"nanobot.lan"} })
	_, port, err := net.SplitHostPort(url[len("http://"):])
	require.NoError(t, err)
	evil := []string{"Host", "evil.example:" + port, "Origin", "http://evil.example:" + port}
	for _, r := range []struct{ method, path string }{{"POST", "/v1/chat/completions"}, {"GET", "/v1/models"}, {"GET", "/health"}} {
		res := wait(t, do(t, context.Background(), r.method, url+r.path, hello, evil...))
		require.Equal(t, http.StatusMisdirectedRequest, res.status, "%s %s: %s", r.method, r.path, res.body)
		require.Contains(t, res.body, "api.allowedHosts")
	}
	p.mu.Lock()
	require.Empty(t, p.msgs, "no turn started")
	p.mu.Unlock()
	for _, host := range []string{"127.0.0.1:" + port, "localhost:" + port, "[::1]:" + port, "nanobot.lan:" + port} {
		res := wait(t, do(t, context.Background(), "GET", url+"/v1/models", "", "Host", host))
		require.Equal(t, http.StatusOK, res.status, host)
	}
}

// TestBeyondLoopbackTheAPINeedsItsKey: api.host 0.0.0.0 without api.apiKey
// stops the process, naming the key and the config file; with a key the API
// serves and the key is required.
func TestBeyondLoopbackTheAPINeedsItsKey(t *testing.T) {
	cfg := config.Default()
	cfg.Path = filepath.Join(t.TempDir(), "config.json")
	cfg.Agents.Defaults.Model = "test-model"
	cfg.API.Host, cfg.API.Port = "0.0.0.0", 0
	deps := channels.Deps{Config: cfg, Workspace: t.TempDir(), ProcessQueue: testQueue, Log: slog.New(slog.DiscardHandler)}
	built := channels.Build(cfg, deps, map[string]bool{Name: true})
	require.Empty(t, built.Channels)
	require.Len(t, built.Refused, 1)
	require.ErrorContains(t, built.Refused[0], "api.apiKey")
	require.ErrorContains(t, built.Refused[0], cfg.Path)

	cfg.API.APIKey = "sekret"
	built = channels.Build(cfg, deps, map[string]bool{Name: true})
	require.Empty(t, built.Refused)
	require.Len(t, built.Channels, 1)
	c := built.Channels[0].(*Channel)
	require.NoError(t, c.Start(context.Background(), (&published{}).publish))
	t.Cleanup(func() { _ = c.Stop(context.Background()) })
	_, port, err := net.SplitHostPort(c.endpoint.Addr())
	require.NoError(t, err)
	url := "http://127.0.0.1:" + port
	require.Equal(t, http.StatusUnauthorized, wait(t, do(t, context.Background(), "GET", url+"/v1/models", "")).status)
	require.Equal(t, http.StatusOK, wait(t, do(t, context.Background(), "GET", url+"/v1/models", "", "Authorization", "Bearer sekret")).status)
}
