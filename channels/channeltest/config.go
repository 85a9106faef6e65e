package channeltest

import (
	"encoding/json"
	"path/filepath"
	"testing"

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
