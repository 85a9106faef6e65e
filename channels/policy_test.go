package channels

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGroupGate: every policy, with the chat in or out of the allowlist,
// mentioned or not, with and without requireMention.
func TestGroupGate(t *testing.T) {
	const (
		notListed   = "chat not in channels.x.groupAllowFrom"
		notMention  = "not addressed to the bot (channels.x.groupPolicy mention)"
		notRequired = "not addressed to the bot (channels.x.groupRequireMention)"
	)
	cases := []struct {
		policy             string
		listed, mentioned  bool
		requireMention     bool
		want               string
		asksAboutMentioned bool
	}{
		{PolicyOpen, false, false, false, "", false},
		{PolicyOpen, true, false, false, "", false},
		{PolicyOpen, false, true, false, "", false},
		{PolicyOpen, false, false, true, notRequired, true},
		{PolicyOpen, false, true, true, "", true},
		{PolicyMention, false, false, false, notMention, true},
		{PolicyMention, true, false, false, notMention, true},
		{PolicyMention, false, true, false, "", true},
		{PolicyMention, false, false, true, notMention, true},
		{PolicyMention, true, true, true, "", true},
		{PolicyAllowlist, false, false, false, notListed, false},
		{PolicyAllowlist, false, true, false, notListed, false},
		{PolicyAllowlist, false, true, true, notListed, false},
		{PolicyAllowlist, true, false, false, "", false},
		{PolicyAllowlist, true, true, false, "", false},
		{PolicyAllowlist, true, false, true, notRequired, true},
		{PolicyAllowlist, true, true, true, "", true},
		{"everyone", true, true, false, `unknown channels.x.groupPolicy "everyone"`, false},
		{"", true, true, false, `unknown channels.x.groupPolicy ""`, false},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s listed=%v mentioned=%v require=%v", c.policy, c.listed, c.mentioned, c.requireMention), func(t *testing.T) {
			chat := "C2"
			if c.listed {
				chat = "C1"
			}
			asked := false
			gate := GroupGateOf("x", c.policy, []string{"C1", "C3"})
			gate.RequireMention = c.requireMention
			require.Equal(t, c.want, gate.Skip(chat, func() bool { asked = true; return c.mentioned }))
			require.Equal(t, c.asksAboutMentioned, asked, "mentioned is asked only when the policy needs it")
		})
	}
}

// TestGroupGateKeys: a nested block's keys are named as nested.
func TestGroupGateKeys(t *testing.T) {
	gate := GroupGate{Policy: PolicyAllowlist, RequireMention: true, Key: "channels.signal.group."}
	require.Equal(t, "chat not in channels.signal.group.allowFrom", gate.Skip("g1", func() bool { return true }))
	gate.AllowFrom = AllowFrom{"*"}
	require.Equal(t, "not addressed to the bot (channels.signal.group.requireMention)", gate.Skip("g1", func() bool { return false }))
}

// TestDM: dm.allowFrom joins allowFrom only with policy allowlist; a
// policy other than open or allowlist is refused by its key.
func TestDM(t *testing.T) {
	dm := DM{Enabled: true, Policy: PolicyOpen, AllowFrom: []string{"U2"}}
	require.Empty(t, dm.Skip("x"))
	require.Equal(t, "direct messages are off (channels.x.dm.enabled)", DM{}.Skip("x"))
	require.Equal(t, AllowFrom{"U1"}, dm.Allowed([]string{"U1"}))
	dm.Policy = PolicyAllowlist
	require.Equal(t, AllowFrom{"U1", "U2"}, dm.Allowed([]string{"U1"}))
	require.NoError(t, dm.Validate("x", ""))
	dm.Policy = "everyone"
	require.ErrorContains(t, dm.Validate("x", " in config.json"), `channels.x.dm.policy "everyone" is not "open" or "allowlist" in config.json`)
}
