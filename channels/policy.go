package channels

import (
	"fmt"
	"strings"
)

// GroupGate is nanobot's groupPolicy for messages in group chats: "open"
// takes them all, "allowlist" those of the chats in AllowFrom, "mention"
// those that address the bot; RequireMention asks a mention on top of
// whatever the policy lets through. DMs and who may talk (allowFrom,
// pairing) are not its business.
type GroupGate struct {
	Policy         string
	AllowFrom      AllowFrom
	RequireMention bool
	// Key is where the gate's settings hang in config.json, for the skip
	// reasons: "channels.slack.group" names channels.slack.groupPolicy and
	// its siblings, "channels.signal.group." channels.signal.group.policy.
	Key string
}

// GroupGateOf is the gate of channels.<name>'s flat keys: groupPolicy,
// groupAllowFrom (the chats of "allowlist") and groupRequireMention.
func GroupGateOf(name, policy string, allowFrom []string) GroupGate {
	return GroupGate{Policy: policy, AllowFrom: allowFrom, Key: "channels." + name + ".group"}
}

// Skip is why a group message is left alone, "" to take it: first the
// chat (SkipChat), then the mention (SkipUnaddressed).
func (g GroupGate) Skip(chat string, mentioned func() bool) string {
	if why := g.SkipChat(chat); why != "" {
		return why
	}
	return g.SkipUnaddressed(mentioned)
}

// SkipChat is the policy's verdict on the chat alone: an unknown policy
// or a chat the allowlist does not hold.
func (g GroupGate) SkipChat(chat string) string {
	switch g.Policy {
	case PolicyOpen, PolicyMention:
		return ""
	case PolicyAllowlist:
		if g.AllowFrom.Allows(chat) {
			return ""
		}
		return "chat not in " + g.key("AllowFrom")
	}
	return fmt.Sprintf("unknown %s %q", g.key("Policy"), g.Policy)
}

// SkipUnaddressed is the verdict on a message of an admitted chat that
// the bot may have to be addressed in; mentioned is asked only then.
func (g GroupGate) SkipUnaddressed(mentioned func() bool) string {
	switch {
	case g.Policy != PolicyMention && !g.RequireMention, mentioned():
		return ""
	case g.Policy == PolicyMention:
		return "not addressed to the bot (" + g.key("Policy") + " mention)"
	}
	return "not addressed to the bot (" + g.key("RequireMention") + ")"
}

// key is the config path of one of the gate's settings ("Policy", …).
func (g GroupGate) key(setting string) string {
	if strings.HasSuffix(g.Key, ".") {
		return g.Key + strings.ToLower(setting[:1]) + setting[1:]
	}
	return g.Key + setting
}

// DM is nanobot's dm block: whether the bot takes direct messages, and
// with policy "allowlist" who may send them besides allowFrom.
type DM struct {
	Enabled   bool     `json:"enabled"`
	Policy    string   `json:"policy"` // "open" | "allowlist"
	AllowFrom []string `json:"allowFrom"`
}

// Skip is why channels.<name> leaves a direct message alone, "" to take it.
func (d DM) Skip(name string) string {
	if d.Enabled {
		return ""
	}
	return "direct messages are off (channels." + name + ".dm.enabled)"
}

// Validate checks channels.<name>.dm.policy.
func (d DM) Validate(name, where string) error {
	return CheckOneOf(name, "dm.policy", d.Policy, where, PolicyOpen, PolicyAllowlist)
}

// Allowed is allowFrom, plus dm.allowFrom when DMs are on an allowlist
// (nanobot lets those senders DM the bot).
func (d DM) Allowed(allowFrom []string) AllowFrom {
	list := append(AllowFrom{}, allowFrom...)
	if d.Policy == PolicyAllowlist {
		list = append(list, d.AllowFrom...)
	}
	return list
}
