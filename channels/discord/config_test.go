package discord

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/channeltest"
)

func TestConfigReadsNanobotsBlock(t *testing.T) {
	// nanobot's own dump of the block: snake_case keys and nulls.
	cfg := channeltest.ConfigWith(t, Name, `{"enabled":true,"token":"tok","allow_from":["123"],"allow_channels":[],"intents":37377,
		"group_policy":"open","read_receipt_emoji":"👀","working_emoji":"🔧","working_emoji_delay":2.0,"streaming":true,
		"proxy":null,"proxy_username":null,"proxy_password":null}`)
	c, err := readConfig(cfg)
	require.NoError(t, err)
	require.Equal(t, "open", c.GroupPolicy)
	require.Equal(t, []string{"123"}, c.AllowFrom)
	require.Empty(t, c.Proxy)
	w, err := channels.CheckValidBlock(Name, defaults)(cfg)
	require.NoError(t, err)
	require.Empty(t, w)

	spec, ok := channels.Lookup(Name)
	require.True(t, ok)
	require.True(t, spec.Enabled(cfg))
	require.Empty(t, spec.Missing(cfg))
	require.True(t, channels.AllowFromFor(cfg, Name).Allows("123"))
	require.False(t, channels.AllowFromFor(cfg, Name).Allows("456"))
}

func TestConfigDefaults(t *testing.T) {
	cfg := channeltest.ConfigWith(t, Name, `{"enabled":true}`)
	c, err := readConfig(cfg)
	require.NoError(t, err)
	want := defaults()
	want.Enabled = true
	require.Equal(t, want, c)
	require.Equal(t, 37377, c.Intents)
	require.Equal(t, "mention", c.GroupPolicy)
	require.True(t, c.Streaming)
	spec, _ := channels.Lookup(Name)
	require.Equal(t, []string{"channels.discord.token"}, spec.Missing(cfg))
	require.False(t, channels.AllowFromFor(cfg, Name).Allows("123"), "no allowFrom: nobody but paired senders")
}

func TestConfigErrorsNameTheKey(t *testing.T) {
	channeltest.CheckBlocks(t, Name, map[string]string{
		`{"groupPolicy":"allowlist"}`: "channels.discord.groupPolicy",
		`{"intents":"all"}`:           "channels.discord.intents",
		`{"apiBase":"not a url"}`:     "channels.discord.apiBase",
		`{"allowFrom":"123"}`:         "channels.discord.allowFrom",
		`{"streaming":"yes please"}`:  "channels.discord.streaming",
	}, map[string]string{`{"tokn":"x"}`: "channels.discord.tokn"})
}
