package workers

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/config"
)

func writeConfig(t *testing.T, path string, workspace, key string) {
	t.Helper()
	data, err := json.Marshal(map[string]any{
		"agents":    map[string]any{"defaults": map[string]any{"workspace": workspace, "model": "m", "provider": "custom"}},
		"providers": map[string]any{"custom": map[string]any{"apiKey": key, "apiBase": "http://127.0.0.1:1/v1"}},
	})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o600))
}

func TestConfigReloadRebuildsClientsOnlyWhenProvidersChange(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.json")
	writeConfig(t, path, "ws1", "key-1")
	cfg, _, err := config.Load(path)
	require.NoError(t, err)
	m := newConfigModels(cfg, nil)
	first, err := m.Model("")
	require.NoError(t, err)

	writeConfig(t, path, "ws2", "key-1")
	cfg2, _, err := config.Load(path)
	require.NoError(t, err)
	require.False(t, m.reload(cfg2), "a workspace change keeps the clients")
	same, err := m.Model("")
	require.NoError(t, err)
	require.Same(t, first.Provider, same.Provider)

	writeConfig(t, path, "ws2", "key-2")
	cfg3, _, err := config.Load(path)
	require.NoError(t, err)
	require.True(t, m.reload(cfg3), "a new key rebuilds them")
	rebuilt, err := m.Model("")
	require.NoError(t, err)
	require.NotSame(t, first.Provider, rebuilt.Provider)
}

func TestWatchConfigPicksUpChangesAndKeepsLastGood(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.json")
	writeConfig(t, path, "ws1", "key-1")
	cfg, _, err := config.Load(path)
	require.NoError(t, err)
	m := newConfigModels(cfg, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go m.watchConfig(ctx, 10*time.Millisecond, slogDiscard(), nil)

	time.Sleep(20 * time.Millisecond)
	writeConfig(t, path, "ws-new", "key-1")
	future := time.Now().Add(time.Second)
	require.NoError(t, os.Chtimes(path, future, future))
	require.Eventually(t, func() bool { return m.Config().Agents.Defaults.Workspace == "ws-new" }, 5*time.Second, 10*time.Millisecond)

	require.NoError(t, os.WriteFile(path, []byte("{broken"), 0o600))
	later := future.Add(time.Second)
	require.NoError(t, os.Chtimes(path, later, later))
	time.Sleep(100 * time.Millisecond)
	require.Equal(t, "ws-new", m.Config().Agents.Defaults.Workspace, "a broken file leaves the last good config")
}

func slogDiscard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
