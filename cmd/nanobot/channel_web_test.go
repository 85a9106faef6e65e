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
	b := buildChannels(cfg, deps, nil)
	require.Len(t, b.list, 1)
	require.Equal(t, "web", b.list[0].Name())
	require.Contains(t, b.queues, "nanobot-channel-web", "replies wait on the shared web queue")

	t.Setenv("TEMPORAL_ADDRESS", "temporal.internal:7233")
	require.Empty(t, buildChannels(cfg, deps, nil).list, "off against an external cluster unless enabled")
	on := true
	cfg.Channels.Web.Enabled = &on
	require.Len(t, buildChannels(cfg, deps, nil).list, 1)
	require.Empty(t, buildChannels(cfg, deps, map[string]bool{}).list, "a plain worker runs no channels")
}
