package telegram

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels/channeltest"
	"github.com/nanobot-durable/nanobot/config"
)

// editBlock changes channels.telegram of cfg through its typed block.
func editBlock(t *testing.T, cfg *config.Config, edit func(*Config)) {
	channeltest.EditBlock(t, cfg, Name, defaults, edit)
}

func TestConfigDefaultsAreNanobots(t *testing.T) {
	c, err := readConfig(config.Default())
	require.NoError(t, err)
	require.Equal(t, "polling", c.Mode)
	require.Equal(t, 8081, c.WebhookListenPort)
	require.Equal(t, "👀", c.ReactEmoji)
}

func TestConfigMergesTheFileOverDefaults(t *testing.T) {
	cfg, _ := channeltest.LoadFile(t, `{"channels": {"telegram": {"enabled": true, "token": "123:abc", "allowFrom": ["42"], "stream_edit_interval": 1}}}`)
	c, err := readConfig(cfg)
	require.NoError(t, err)
	require.Equal(t, []any{true, "123:abc", []string{"42"}, 1.0, "polling"}, []any{c.Enabled, c.Token, c.AllowFrom, c.StreamEditInterval, c.Mode})
}

func TestConfigFromTheEnvironment(t *testing.T) {
	cfg, _, err := config.LoadWithEnv(t.TempDir()+"/config.json", []string{"NANOBOT_CHANNELS__TELEGRAM__ENABLED=true"})
	require.NoError(t, err)
	c, err := readConfig(cfg)
	require.NoError(t, err)
	require.True(t, c.Enabled)
}

func TestEveryKeyIsReadOrUnused(t *testing.T) {
	channeltest.EveryKeyIsReadOrUnused(t, Name, Config{},
		"channels.telegram.enabled", "channels.telegram.token", "channels.telegram.apiBase", "channels.telegram.mode",
		"channels.telegram.allowFrom", "channels.telegram.proxy", "channels.telegram.replyToMessage",
		"channels.telegram.reactEmoji", "channels.telegram.groupPolicy", "channels.telegram.streaming",
		"channels.telegram.streamEditInterval")
}

func TestBadBlockNamesTheKeyAndFile(t *testing.T) {
	channeltest.CheckBlocks(t, Name, map[string]string{`"on"`: "channels.telegram", `{"enabled": "yes"}`: "channels.telegram.enabled",
		`{"allowFrom": "1001"}`: "channels.telegram.allowFrom", `{"token": 5}`: "channels.telegram.token",
		`{"groupPolicy": "allowlist"}`: `channels.telegram.groupPolicy "allowlist" is not "mention" or "open"`}, nil)
}
