package mattermost

import (
	"errors"

	"github.com/nanobot-durable/nanobot/channels"
)

// Config is nanobot's channels.mattermost block, key for key.
type Config struct {
	Enabled   bool   `json:"enabled"`
	ServerURL string `json:"serverUrl"`
	Token     string `json:"token"` // the bot account's access token
	TeamID    string `json:"teamId"`
	// AllowFrom are user ids, or usernames or emails as allowFromMatchMode says, or "*".
	AllowFrom          []string `json:"allowFrom"`
	AllowFromMatchMode string   `json:"allowFromMatchMode"`
	// GroupPolicy is "mention", "open" or "allowlist" (groupAllowFrom's
	// channel ids); GroupPolicyInThread the same in a thread ("": groupPolicy).
	GroupPolicy          string      `json:"groupPolicy"`
	GroupPolicyInThread  string      `json:"groupPolicyInThread"`
	GroupAllowFrom       []string    `json:"groupAllowFrom"`
	ReplyInThread        bool        `json:"replyInThread"`
	IncludeThreadContext bool        `json:"includeThreadContext"`
	ThreadContextLimit   int         `json:"threadContextLimit"`
	Streaming            bool        `json:"streaming"`
	StreamingMaxChars    int         `json:"streamingMaxChars" unused:"a streamed post is cut at Mattermost's 16383 characters"`
	ReactEmoji           string      `json:"reactEmoji"`
	DoneEmoji            string      `json:"doneEmoji"`
	SendProgress         bool        `json:"sendProgress" unused:"channels.sendProgress applies to every channel"`
	SendToolHints        bool        `json:"sendToolHints" unused:"channels.sendToolHints applies to every channel"`
	DM                   channels.DM `json:"dm"`
}

// The Mattermost channel: channels.mattermost in config.json. Mattermost
// renders the model's Markdown as written.
func init() {
	channels.RegisterBlock(Name, New, channels.Format{Hint: channels.ChatAppHint}, defaults)
}

// defaults are nanobot's MattermostConfig defaults.
func defaults() Config {
	c := Config{AllowFromMatchMode: "id", GroupPolicy: "mention", ReplyInThread: true, IncludeThreadContext: true,
		ThreadContextLimit: 20, Streaming: true, StreamingMaxChars: 16000, ReactEmoji: "eyes", DoneEmoji: "white_check_mark",
		SendProgress: true, SendToolHints: true, DM: channels.DM{Enabled: true, Policy: "open"}}
	return c
}

func (c Config) On() bool { return c.Enabled }

// Allowed is allowFrom, plus dm.allowFrom when DMs are on an allowlist.
func (c Config) Allowed() channels.AllowFrom { return c.DM.Allowed(c.AllowFrom) }

func (c Config) Lacking() []string {
	return channels.Blank(Name, "serverUrl", c.ServerURL, "token", c.Token)
}

// Validate implements channels.Validator.
func (c Config) Validate(where string) error {
	return errors.Join(channels.CheckOneOf(Name, "groupPolicy", c.GroupPolicy, where, "mention", "open", "allowlist"),
		channels.CheckOneOf(Name, "groupPolicyInThread", c.GroupPolicyInThread, where, "", "mention", "open", "allowlist"),
		channels.CheckOneOf(Name, "allowFromMatchMode", c.AllowFromMatchMode, where, "id", "username", "email"),
		c.DM.Validate(Name, where),
		channels.CheckURL(Name, "serverUrl", c.ServerURL, where, "http", "https"))
}

// groupGate is the group policy of a post: groupPolicyInThread in a thread.
func (c Config) groupGate(inThread bool) channels.GroupGate {
	policy := c.GroupPolicy
	if inThread && c.GroupPolicyInThread != "" {
		policy = c.GroupPolicyInThread
	}
	return channels.GroupGateOf(Name, policy, c.GroupAllowFrom)
}
