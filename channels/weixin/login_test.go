package weixin

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/weixin/weixinpeer"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/internal/testenv"
)

// runLogin runs `nanobot channels login weixin` against the peer,
// confirming the scan once a QR code was handed out.
func runLogin(t *testing.T, peer *weixinpeer.Peer, cfg *config.Config, force bool) (string, error) {
	t.Helper()
	out := &testenv.SyncBuffer{}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	before := peer.QRCodes()
	go func() {
		for ctx.Err() == nil && peer.QRCodes() == before {
			time.Sleep(10 * time.Millisecond)
		}
		peer.ConfirmScan()
	}()
	err := login(ctx, channels.LoginDeps{Config: cfg, Home: config.ConfigDir(cfg.Path), Out: out, Force: force})
	return out.String(), err
}

// TestLoginWritesPrivateState: the QR code is drawn in the terminal, the
// scan is polled until confirmed, and the token lands in a 0600 account.json.
func TestLoginWritesPrivateState(t *testing.T) {
	peer := weixinpeer.New(t)
	dir := filepath.Join(t.TempDir(), "weixin")
	cfg := configFor(t, peer, dir, nil)
	spec, ok := channels.Lookup(Name)
	require.True(t, ok)
	require.NotEmpty(t, spec.Missing(cfg), "no stored login: the gateway banner says to log in")
	require.Contains(t, spec.Missing(cfg)[0], "nanobot channels login weixin")

	out, err := runLogin(t, peer, cfg, false)
	require.NoError(t, err)
	require.Contains(t, out, "█", "the QR code is drawn")
	require.Contains(t, out, "https://liteapp.weixin.example/q/qr-1", "its content is printed below it")
	require.Contains(t, out, "WeChat login confirmed")
	require.Equal(t, 0o600, int(fileMode(t, filepath.Join(dir, accountFile))), "the token is the user's alone")
	a, err := loadAccount(dir)
	require.NoError(t, err)
	require.Equal(t, weixinpeer.Token, a.Token)
	require.Equal(t, peer.URL(), a.BaseURL, "the base url WeChat named is kept")
	require.Empty(t, spec.Missing(cfg), "a stored login is all the channel needs")
	require.Positive(t, peer.Calls("get_qrcode_status"))

	out, err = runLogin(t, peer, cfg, false)
	require.NoError(t, err)
	require.Contains(t, out, "already logged in")
	require.Equal(t, 1, peer.QRCodes(), "no new QR code without --force")

	peer.Expire("second-token")
	out, err = runLogin(t, peer, cfg, true)
	require.NoError(t, err)
	require.Equal(t, 2, peer.QRCodes(), "--force scans again")
	a, err = loadAccount(dir)
	require.NoError(t, err)
	require.Equal(t, "second-token", a.Token, out)
}

// TestLoginExpiredQRCodeGivesUp: a login nobody confirms stops with ctx.
func TestLoginStopsWithItsContext(t *testing.T) {
	peer := weixinpeer.New(t)
	cfg := configFor(t, peer, t.TempDir(), nil)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for peer.Calls("get_qrcode_status") == 0 {
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
	}()
	err := login(ctx, channels.LoginDeps{Config: cfg, Home: t.TempDir(), Out: &strings.Builder{}})
	require.ErrorIs(t, err, context.Canceled)
	a, err := loadAccount(block(cfg).StateDir)
	require.NoError(t, err)
	require.Empty(t, a.Token, "nothing stored without a confirmed scan")
}
