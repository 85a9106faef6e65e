package signal

import (
	"errors"
	"net"
	"strconv"
	"strings"

	"github.com/nanobot-durable/nanobot/channels"
)

// Config is nanobot's channels.signal block, read unchanged.
type Config struct {
	Enabled bool `json:"enabled"`
	// PhoneNumber is the bot's account on the daemon ("+15551234567").
	PhoneNumber string `json:"phoneNumber"`
	// DaemonHost and DaemonPort are signal-cli's HTTP daemon
	// (signal-cli -a <number> daemon --http host:port).
	DaemonHost string `json:"daemonHost"`
	DaemonPort int    `json:"daemonPort"`
	// GroupMessageBufferSize is how many recent group messages a mention
	// carries along as context.
	GroupMessageBufferSize int `json:"groupMessageBufferSize"`
	// AttachmentsDir is where the daemon writes received attachments
	// (default ~/.local/share/signal-cli/attachments).
	AttachmentsDir string `json:"attachmentsDir"`
	// DM is direct messages: dm.policy "allowlist" (dm.allowFrom's phone
	// numbers or UUIDs, "+" optional, then pairing) or "open".
	DM    channels.DM `json:"dm"`
	Group GroupConfig `json:"group"`
}

// GroupConfig is nanobot's channels.signal.group: group chats.
type GroupConfig struct {
	Enabled bool `json:"enabled"`
	// Policy is "allowlist" (only the group ids in AllowFrom) or "open".
	Policy    string   `json:"policy"`
	AllowFrom []string `json:"allowFrom"`
	// RequireMention: answer only when @-mentioned (commands always).
	RequireMention bool `json:"requireMention"`
}

// defaults are nanobot's SignalConfig defaults.
func defaults() Config {
	return Config{
		DaemonHost: "localhost", DaemonPort: 8080, GroupMessageBufferSize: 20,
		DM:    channels.DM{Policy: channels.PolicyAllowlist},
		Group: GroupConfig{Policy: channels.PolicyAllowlist, RequireMention: true},
	}
}

// Validate implements channels.Validator.
func (c Config) Validate(where string) error {
	return errors.Join(c.DM.Validate(Name, where),
		channels.CheckOneOf(Name, "group.policy", c.Group.Policy, where, channels.PolicyOpen, channels.PolicyAllowlist),
		channels.CheckPort(Name, "daemonPort", c.DaemonPort, false, where),
		channels.CheckAtLeast(Name, "groupMessageBufferSize", c.GroupMessageBufferSize, 1, where))
}

// gate is group.policy and group.requireMention as the kit applies them.
func (g GroupConfig) gate() channels.GroupGate {
	return channels.GroupGate{Policy: g.Policy, AllowFrom: g.AllowFrom, RequireMention: g.RequireMention, Key: "channels.signal.group."}
}

// daemonURL is the base of the daemon's endpoints.
func (c Config) daemonURL() string {
	return "http://" + net.JoinHostPort(c.DaemonHost, strconv.Itoa(c.DaemonPort))
}

func (c Config) On() bool { return c.Enabled }

func (c Config) Lacking() []string { return channels.Blank(Name, "phoneNumber", c.PhoneNumber) }

// Allowed is who may talk through Signal: everyone with dm.policy "open",
// else dm.allowFrom, each number with and without its "+" (nanobot
// matches both). Anyone else comes in through pairing.
func (c Config) Allowed() channels.AllowFrom {
	if c.DM.Policy == channels.PolicyOpen {
		return channels.AllowFrom{"*"}
	}
	var out channels.AllowFrom
	for _, e := range c.DM.AllowFrom {
		out = append(out, idVariants(e)...)
	}
	return out
}

// idVariants are the spellings of a Signal id nanobot takes as the same:
// as given, lower-cased (UUIDs), and a number with and without its "+".
func idVariants(id string) []string {
	id = strings.TrimSpace(id)
	if id == "" {
		return nil
	}
	out := []string{id}
	if l := strings.ToLower(id); l != id {
		out = append(out, l)
	}
	if n, ok := strings.CutPrefix(id, "+"); ok && n != "" {
		out = append(out, n)
	} else if isNumber(id) {
		out = append(out, "+"+id)
	}
	return out
}

// isNumber tells a phone number ("+15551234567", or its digits) from a uuid.
func isNumber(id string) bool {
	digits, _ := strings.CutPrefix(id, "+")
	return digits != "" && strings.Trim(digits, "0123456789") == ""
}
