package feishu

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/channeltest"
	"github.com/nanobot-durable/nanobot/config"
)

func cfgWith(t *testing.T, block map[string]any) *config.Config {
	t.Helper()
	raw, err := json.Marshal(block)
	require.NoError(t, err)
	return channeltest.ConfigWith(t, Name, string(raw))
}

func TestDefaultsAreNanobots(t *testing.T) {
	c, err := readConfig(cfgWith(t, map[string]any{"enabled": true}))
	require.NoError(t, err)
	require.Equal(t, "mention", c.GroupPolicy)
	require.Equal(t, "THUMBSUP", c.ReactEmoji)
	require.Equal(t, "feishu", c.Domain)
	require.True(t, c.Streaming)
	require.True(t, c.TopicIsolation)
	require.False(t, c.ReplyToMessage)
	require.Equal(t, "https://open.feishu.cn", c.base())
}

func TestDomainSwitchAndAPIBase(t *testing.T) {
	c, err := readConfig(cfgWith(t, map[string]any{"domain": "lark"}))
	require.NoError(t, err)
	require.Equal(t, "https://open.larksuite.com", c.base())
	c, err = readConfig(cfgWith(t, map[string]any{"domain": "lark", "apiBase": "http://127.0.0.1:9/"}))
	require.NoError(t, err)
	require.Equal(t, "http://127.0.0.1:9", c.base(), "apiBase wins over the domain")
	channeltest.CheckBlocks(t, Name, map[string]string{
		`{"domain": "larksuite"}`:      "channels.feishu.domain",
		`{"groupPolicy": "allowlist"}`: "channels.feishu.groupPolicy",
		`{"apiBase": "not a url"}`:     "channels.feishu.apiBase",
	}, nil)
}

func TestNanobotsSnakeCaseBlockReads(t *testing.T) {
	cfg := cfgWith(t, map[string]any{"enabled": true, "app_id": "cli_x", "app_secret": "s", "allow_from": []string{"ou_1"},
		"group_policy": "open", "react_emoji": "OK", "encrypt_key": "", "verification_token": "", "instance_id": "default"})
	warnings, err := channels.CheckValidBlock(Name, defaults)(cfg)
	require.NoError(t, err)
	require.Empty(t, warnings)
	c, err := readConfig(cfg)
	require.NoError(t, err)
	require.Equal(t, "cli_x", c.AppID)
	require.Equal(t, "open", c.GroupPolicy)
	require.Equal(t, []string{"ou_1"}, c.AllowFrom)
}
