package slack

import (
	"cmp"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
)

// Config is nanobot's channels.slack block, read unchanged.
type Config struct {
	Enabled              bool              `json:"enabled"`
	APIBase              string            `json:"apiBase"` // Web API base URL; "" = Slack's (tests)
	Mode                 string            `json:"mode"`
	WebhookPath          string            `json:"webhookPath" unused:"Slack runs in Socket Mode only"`
	WebhookHost          string            `json:"webhookHost" unused:"Slack runs in Socket Mode only"`
	WebhookPort          int               `json:"webhookPort" unused:"Slack runs in Socket Mode only"`
	WebhookSecret        string            `json:"webhookSecret" unused:"Slack runs in Socket Mode only"`
	BotToken             string            `json:"botToken"`
	ChannelTokens        map[string]string `json:"channelTokens" unused:"one bot token serves every channel"`
	AppToken             string            `json:"appToken"`
	UserTokenReadOnly    bool              `json:"userTokenReadOnly" unused:"no user token is used"`
	ReplyInThread        bool              `json:"replyInThread"`
	ReactEmoji           string            `json:"reactEmoji"`
	DoneEmoji            string            `json:"doneEmoji"`
	TypingStatus         string            `json:"typingStatus" unused:"Slack shows the reaction emoji while a turn runs"`
	IncludeThreadContext bool              `json:"includeThreadContext"`
	ThreadContextLimit   int               `json:"threadContextLimit"`
	AllowFrom            []string          `json:"allowFrom"`
	GroupPolicy          string            `json:"groupPolicy"` // "open" | "mention" | "allowlist"
	GroupAllowFrom       []string          `json:"groupAllowFrom"`
	GroupRequireMention  bool              `json:"groupRequireMention"`
	DM                   channels.DM       `json:"dm"`
}

// defaults are nanobot's SlackConfig defaults.
func defaults() Config {
	return Config{
		Mode:                 "socket",
		WebhookPath:          "/slack/events",
		WebhookHost:          "127.0.0.1",
		WebhookPort:          18800,
		ChannelTokens:        map[string]string{},
		UserTokenReadOnly:    true,
		ReplyInThread:        true,
		ReactEmoji:           "eyes",
		DoneEmoji:            "white_check_mark",
		IncludeThreadContext: true,
		ThreadContextLimit:   20,
		AllowFrom:            []string{},
		GroupPolicy:          "mention",
		GroupAllowFrom:       []string{},
		DM:                   channels.DM{Enabled: true, Policy: "open", AllowFrom: []string{}},
	}
}

// readConfig is channels.slack over nanobot's defaults.
func readConfig(cfg *config.Config) (Config, error) { return channels.ValidBlock(cfg, Name, defaults) }

// Validate implements channels.Validator; an unsupported mode is the
// constructor's warning, so the rest of the gateway still starts.
func (c Config) Validate(where string) error { return c.DM.Validate(Name, where) }

func (c Config) On() bool { return c.Enabled }

// Allowed is allowFrom, plus dm.allowFrom on a DM allowlist; anyone else
// comes in through pairing.
func (c Config) Allowed() channels.AllowFrom { return c.DM.Allowed(c.AllowFrom) }

// groupGate is groupPolicy ("" is nanobot's default, mention);
// groupRequireMention counts with the allowlist only.
func (c Config) groupGate() channels.GroupGate {
	policy := cmp.Or(c.GroupPolicy, channels.PolicyMention)
	gate := channels.GroupGateOf(Name, policy, c.GroupAllowFrom)
	gate.RequireMention = c.GroupRequireMention && policy == channels.PolicyAllowlist
	return gate
}

func (c Config) Lacking() []string {
	return channels.Blank(Name, "botToken", c.BotToken, "appToken", c.AppToken)
}
