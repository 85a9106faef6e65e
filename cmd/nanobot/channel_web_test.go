package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
)

func TestWebChatIsOnWithALocalTemporalOnly(t *testing.T) {
	cfg := config.Default()
	deps := channels.Deps{Config: cfg, Workspace: t.TempDir(), ProcessQueue: "q"}
	t.Setenv("TEMPORAL_ADDRESS", "")
	b := channels.Build(cfg, deps, nil)
	require.Len(t, b.Channels, 1)
	require.Equal(t, "web", b.Channels[0].Name())
	require.Contains(t, b.Queues, "nanobot-channel-web", "replies wait on the shared web queue")

	t.Setenv("TEMPORAL_ADDRESS", "temporal.internal:7233")
	require.Empty(t, channels.Build(cfg, deps, nil).Channels, "off against an external cluster unless enabled")
	require.NoError(t, cfg.SetChannelBlock("web", map[string]any{"enabled": true}))
	require.Len(t, channels.Build(cfg, deps, nil).Channels, 1)
	require.Empty(t, channels.Build(cfg, deps, map[string]bool{}).Channels, "a plain worker runs no channels")
}
