package tools

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/protocol"
)

// TestTemporaryChatHasNoGoalsSubagentsOrCron: nanobot's Temporary Chat
// disables create_goal, update_goal, spawn and cron: not offered, refused
// if called; the rest stays.
func TestTemporaryChatHasNoGoalsSubagentsOrCron(t *testing.T) {
	p := NewPolicy(protocol.ProfileFor(protocol.TemporaryTurn, false), t.TempDir()).WithActiveGoal(true)
	var defs []chat.ToolDefinition
	for _, n := range []string{"read_file", "exec", "spawn", "cron", "create_goal", "update_goal", "message"} {
		defs = append(defs, chat.ToolDefinition{Name: n})
	}
	var offered []string
	for _, d := range p.Offer(defs) {
		offered = append(offered, d.Name)
	}
	require.Equal(t, []string{"read_file", "exec", "message"}, offered)
	err := p.Permit("spawn", map[string]any{"task": "x"})
	require.EqualError(t, err, "Error: Tool 'spawn' is not available in a temporary chat")
	require.NoError(t, p.Permit("exec", map[string]any{"command": "ls"}))
	require.False(t, protocol.TemporaryTurn.RemembersIn(), "nothing of it goes to memory")
	require.True(t, protocol.ChatTurn.RemembersIn())
}
