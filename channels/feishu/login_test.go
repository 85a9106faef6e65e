package feishu

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/feishu/feishupeer"
	"github.com/nanobot-durable/nanobot/config"
)

// TestLoginCreatesAndSavesTheApp: init → begin → the QR code → polls
// until the scan → the app's id and secret written into channels.feishu.
func TestLoginCreatesAndSavesTheApp(t *testing.T) {
	peer := feishupeer.New(t)
	peer.ScanAfter(2, "lark")
	path := filepath.Join(t.TempDir(), "config.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"channels": {"feishu": {"apiBase": "`+peer.URL()+`", "allowFrom": ["ou_owner"], "app_id": ""}}}`), 0o600))
	cfg, _, err := config.Load(path)
	require.NoError(t, err)
	var out bytes.Buffer
	spec, ok := channels.Lookup(Name)
	require.True(t, ok)
	require.NotNil(t, spec.Login)
	require.NoError(t, spec.Login(context.Background(), channels.LoginDeps{Config: cfg, Out: &out, Log: slog.Default()}))
	require.Contains(t, out.String(), feishupeer.RegistrationURL, "the QR code's URL is shown")
	require.Equal(t, 3, peer.RegistrationPolls(), "polled until the scan")

	saved, _, err := config.Load(path)
	require.NoError(t, err)
	c, err := readConfig(saved)
	require.NoError(t, err)
	require.True(t, c.Enabled)
	require.Equal(t, feishupeer.RegisteredAppID, c.AppID)
	require.Equal(t, feishupeer.RegisteredSecret, c.AppSecret)
	require.Equal(t, "lark", c.Domain, "a Lark tenant scanned it")
	require.Equal(t, []string{"ou_owner"}, c.AllowFrom, "the rest of the block is kept")
	var raw map[string]any
	require.NoError(t, json.Unmarshal(saved.Channels.Other["feishu"], &raw))
	require.NotContains(t, raw, "app_id", "one spelling of the key is left")

	out.Reset()
	require.NoError(t, spec.Login(context.Background(), channels.LoginDeps{Config: saved, Out: &out, Log: slog.Default()}))
	require.Contains(t, out.String(), "already has app", "an app in place is kept without --force")
}
