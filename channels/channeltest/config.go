package channeltest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
)

// ConfigWith is a default config, kept in a temporary home, holding one
// channel block given as JSON (nanobot's spelling, read unchanged).
func ConfigWith(t testing.TB, channel, block string) *config.Config {
	t.Helper()
	cfg := config.Default()
	cfg.Path = filepath.Join(t.TempDir(), "config.json")
	cfg.Channels.Other = map[string]json.RawMessage{channel: json.RawMessage(block)}
	return cfg
}

// LoadFile loads a config.json holding content, as a command does; it
// returns the config and the file's path.
func LoadFile(t testing.TB, content string) (*config.Config, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, _, err := config.LoadWithEnv(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cfg, path
}

// EditBlock changes channels.<name> of cfg through the channel's typed
// block, read over its defaults.
func EditBlock[T any](t testing.TB, cfg *config.Config, name string, defaults func() T, edit func(*T)) {
	t.Helper()
	b, err := channels.Block(cfg, name, defaults)
	if err == nil {
		edit(&b)
		err = cfg.SetChannelBlock(name, b)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// CheckBlocks runs the config check on blocks of channels.<name>, each in a
// config.json loaded as a command does: a block of refused fails with an
// error holding its text (the key, at the least) and the file's path; a
// block of warned passes with a warning on its key (an unknown key, a key
// this build ignores).
func CheckBlocks(t *testing.T, name string, refused, warned map[string]string) {
	t.Helper()
	for block, want := range refused {
		cfg, path := LoadFile(t, `{"channels": {"`+name+`": `+block+`}}`)
		_, err := channels.CheckConfig(cfg)
		require.ErrorContains(t, err, want, block)
		require.ErrorContains(t, err, path, block)
	}
	for block, key := range warned {
		cfg, _ := LoadFile(t, `{"channels": {"`+name+`": `+block+`}}`)
		w, err := channels.CheckConfig(cfg)
		require.NoError(t, err, block)
		require.True(t, slices.ContainsFunc(w, func(w config.Warning) bool { return w.Key == key }), "%s: no warning on %s in %v", block, key, w)
	}
}
