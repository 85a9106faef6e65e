package channeltest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
)

// TestFieldRead: a field of a kit type counts as read when the kit reads
// it; a channel's own field only when the channel does.
func TestFieldRead(t *testing.T) {
	type group struct {
		Policy string `json:"policy"`
	}
	type block struct {
		DM    channels.DM `json:"dm"`
		Group group       `json:"group"`
	}
	keys := map[string]config.Key{}
	for _, k := range config.BlockKeys("x", block{}) {
		keys[k.Path] = k
	}
	dmPolicy, groupPolicy := keys["channels.x.dm.policy"], keys["channels.x.group.policy"]
	require.True(t, fieldRead(dmPolicy, "", "d.Policy == PolicyAllowlist"), "the kit reads dm.policy")
	require.True(t, fieldRead(dmPolicy, "c.DM.Policy", ""), "the channel reads dm.policy")
	require.False(t, fieldRead(dmPolicy, "", "d.PolicyKey"), "no code reads dm.policy")
	require.False(t, fieldRead(groupPolicy, "", "d.Policy"), "the kit's code does not read a channel's own field")
	require.True(t, fieldRead(groupPolicy, "c.cfg.Group.Policy", ""))
}
