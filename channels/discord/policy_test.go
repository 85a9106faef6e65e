package discord

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSkipReasonGroupPolicy: in a guild, mention needs the bot addressed
// (and says so when the bot does not know its id yet); open takes all; DMs pass.
func TestSkipReasonGroupPolicy(t *testing.T) {
	c := &Channel{cfg: defaults()}
	alice := &user{ID: "U1"}
	chatter := message{ChannelID: "C1", GuildID: "G1", Author: alice, Content: "hi all"}
	addressed := message{ChannelID: "C1", GuildID: "G1", Author: alice, Content: "<@B1> hi", Mentions: []user{{ID: "B1"}}}
	const notAddressed = "not addressed to the bot (channels.discord.groupPolicy mention)"
	require.Equal(t, notAddressed, c.skipReason(chatter, "B1", ""))
	require.Equal(t, "", c.skipReason(addressed, "B1", ""))
	require.Equal(t, notAddressed+"; "+skipNoIdentity, c.skipReason(addressed, "", ""))
	require.Equal(t, "", c.skipReason(message{ChannelID: "D1", Author: alice, Content: "hi"}, "B1", ""), "a DM")
	c.cfg.GroupPolicy = "open"
	require.Equal(t, "", c.skipReason(chatter, "B1", ""))
	require.Equal(t, "", c.skipReason(chatter, "", ""))
}
