package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
)

func TestSlackChannelIsBuiltFromConfig(t *testing.T) {
	cfg := config.Default()
	require.NoError(t, cfg.SetChannelBlock("web", map[string]any{"enabled": false}))
	deps := channels.Deps{Config: cfg, ProcessQueue: "q"}
	require.Empty(t, channels.Build(cfg, deps, nil).Channels, "disabled by default")

	require.NoError(t, cfg.SetChannelBlock("slack", map[string]any{"enabled": true}))
	b := channels.Build(cfg, deps, nil)
	require.Empty(t, b.Channels)
	require.Contains(t, b.Warnings, "channels.slack is enabled but lacks channels.slack.botToken and channels.slack.appToken: the channel is not started")

	require.NoError(t, cfg.SetChannelBlock("slack", map[string]any{"botToken": "xoxb-1", "appToken": "xapp-1"}))
	b = channels.Build(cfg, deps, nil)
	require.Len(t, b.Channels, 1)
	require.Equal(t, "slack", b.Channels[0].Name())
	require.Contains(t, b.Queues, "nanobot-channel-slack", "replies wait on the shared Slack queue")

	require.NoError(t, cfg.SetChannelBlock("slack", map[string]any{"mode": "webhook"}))
	b = channels.Build(cfg, deps, nil)
	require.Empty(t, b.Channels)
	require.Contains(t, b.Warnings, `channels.slack: channels.slack.mode "webhook" is not supported (only "socket"): the channel is not started`)
}
