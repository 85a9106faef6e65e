package slack

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/channeltest"
	"github.com/nanobot-durable/nanobot/config"
)

// setBlock writes s as channels.slack of cfg.
func setBlock(t *testing.T, cfg *config.Config, s Config) {
	t.Helper()
	require.NoError(t, cfg.SetChannelBlock(Name, s))
}

func TestConfigDefaultsAreNanobots(t *testing.T) {
	c, err := readConfig(config.Default())
	require.NoError(t, err)
	require.Equal(t, channels.DM{Enabled: true, Policy: "open", AllowFrom: []string{}}, c.DM)
	require.Equal(t, 20, c.ThreadContextLimit)
}

func TestConfigMergesTheFileOverDefaults(t *testing.T) {
	cfg, _ := channeltest.LoadFile(t, `{"channels": {"slack": {"enabled": true, "botToken": "xoxb-1", "dm": {"policy": "allowlist"}}}}`)
	c, err := readConfig(cfg)
	require.NoError(t, err)
	require.Equal(t, channels.DM{Enabled: true, Policy: "allowlist", AllowFrom: []string{}}, c.DM)
	require.Equal(t, "xoxb-1", c.BotToken)
}

func TestEveryKeyIsReadOrUnused(t *testing.T) {
	channeltest.EveryKeyIsReadOrUnused(t, Name, Config{},
		"channels.slack.enabled", "channels.slack.apiBase", "channels.slack.mode", "channels.slack.botToken",
		"channels.slack.appToken", "channels.slack.replyInThread", "channels.slack.reactEmoji", "channels.slack.doneEmoji",
		"channels.slack.includeThreadContext", "channels.slack.threadContextLimit", "channels.slack.allowFrom",
		"channels.slack.groupPolicy", "channels.slack.groupAllowFrom", "channels.slack.groupRequireMention",
		"channels.slack.dm.enabled", "channels.slack.dm.policy", "channels.slack.dm.allowFrom")
}

func TestBadBlockNamesTheKeyAndFile(t *testing.T) {
	channeltest.CheckBlocks(t, Name, map[string]string{`{"enabled": 1}`: "channels.slack.enabled", `{"allowFrom": {"a": 1}}`: "channels.slack.allowFrom",
		`{"dm": {"policy": "everyone"}}`: `channels.slack.dm.policy "everyone" is not "open" or "allowlist"`},
		map[string]string{`{"dm": {"alowFrom": ["U1"]}}`: "channels.slack.dm.alowFrom", `{"webhookPort": 1}`: "channels.slack.webhookPort"})
}
