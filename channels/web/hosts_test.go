package web

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/config"
)

// TestAForeignHostGets421: a page whose DNS name was rebound to this machine
// (Host and Origin evil.example, so the Origin check alone passes) neither
// reads a conversation nor starts a turn; the names the chat is bound to do.
func TestAForeignHostGets421(t *testing.T) {
	c, p, base := startChannelWith(t, func(cfg *config.Config) {
		editBlock(t, cfg, func(b *Config) { b.AllowedHosts = []string{"nanobot.lan"} })
	})
	_, err := c.store.Append(context.Background(), "web:old", chat.Message{Role: chat.RoleUser, Content: "first question", Turn: "r0", EntryID: "u"})
	require.NoError(t, err)
	_, port, err := net.SplitHostPort(base[len("http://"):])
	require.NoError(t, err)

	evil := []string{"Host", "evil.example:" + port, "Origin", "http://evil.example:" + port}
	for _, r := range []struct{ method, path, body string }{
		{http.MethodPost, "/api/send", `{"chat":"c","text":"run rm -rf ~"}`},
		{http.MethodGet, "/api/sessions", ""},
		{http.MethodGet, "/api/history?chat=old", ""},
		{http.MethodGet, "/", ""},
	} {
		a := call(t, r.method, base+r.path, r.body, evil...)
		require.Equal(t, http.StatusMisdirectedRequest, a.status, "%s %s: %s", r.method, r.path, a.body)
		require.NotContains(t, a.body, "first question")
		require.Contains(t, a.body, "channels.web.allowedHosts", "the refusal says where to allow a name")
	}
	require.Empty(t, p.all(), "no turn started")

	for _, host := range []string{"127.0.0.1:" + port, "localhost:" + port, "[::1]:" + port, "nanobot.lan:" + port} {
		same := []string{"Host", host, "Origin", "http://" + host}
		a := call(t, http.MethodGet, base+"/api/sessions", "", same...)
		require.Equal(t, http.StatusOK, a.status, host)
		require.Contains(t, a.body, "first question", host)
		require.Equal(t, http.StatusOK, call(t, http.MethodGet, base+"/api/history?chat=old", "", same...).status, host)
		require.Equal(t, http.StatusOK, call(t, http.MethodPost, base+"/api/send", `{"chat":"c","text":"hi"}`, same...).status, host)
	}
	require.Len(t, p.all(), 4)
}

// TestBeyondLoopbackTheChatNeedsItsToken: channels.web.host 0.0.0.0 without
// channels.web.token stops the process, naming the key and the config file;
// with a token it serves, to any IP literal (a rebinding page uses a name).
func TestBeyondLoopbackTheChatNeedsItsToken(t *testing.T) {
	cfg := config.Default()
	cfg.Path = filepath.Join(t.TempDir(), "config.json")
	editBlock(t, cfg, func(b *Config) { b.Host, b.Port = "0.0.0.0", 0 })
	deps := channels.Deps{Config: cfg, Workspace: t.TempDir(), Log: slog.New(slog.DiscardHandler)}
	built := channels.Build(cfg, deps, map[string]bool{Name: true})
	require.Empty(t, built.Channels)
	require.Len(t, built.Refused, 1)
	require.ErrorContains(t, built.Refused[0], "channels.web.token")
	require.ErrorContains(t, built.Refused[0], cfg.Path)

	editBlock(t, cfg, func(b *Config) { b.Token = "s3cret" })
	built = channels.Build(cfg, deps, map[string]bool{Name: true})
	require.Empty(t, built.Refused)
	require.Len(t, built.Channels, 1)
	c := built.Channels[0].(*Channel)
	require.NoError(t, c.Start(context.Background(), (&published{}).publish))
	t.Cleanup(func() { _ = c.Stop(context.Background()) })
	_, port, err := net.SplitHostPort(c.endpoint.Addr())
	require.NoError(t, err)
	base := "http://127.0.0.1:" + port
	require.Equal(t, http.StatusUnauthorized, call(t, http.MethodGet, base+"/api/sessions", "").status)
	require.Equal(t, http.StatusOK, call(t, http.MethodGet, base+"/api/sessions", "", "Authorization", "Bearer s3cret", "Host", "192.0.2.7:"+port).status)
	require.Equal(t, http.StatusMisdirectedRequest, call(t, http.MethodGet, base+"/api/sessions", "", "Authorization", "Bearer s3cret", "Host", "evil.example:"+port).status)
}
