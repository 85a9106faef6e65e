package mattermost

import (
	"fmt"
	"slices"
	"strings"

	"github.com/nanobot-durable/nanobot/channels"
)

// Config is nanobot's channels.mattermost block, key for key.
type Config struct {
	Enabled bool `json:"enabled"`
	// ServerURL is the Mattermost server (https://chat.example.com).
	ServerURL string `json:"serverUrl"`
	// Token is the bot account's access token.
	Token string `json:"token"`
	// TeamID keeps the bot to one team's channels ("" = every team); DMs always come in.
	TeamID string `json:"teamId"`
	// AllowFrom are user ids (or usernames or emails, per allowFromMatchMode) or "*".
	AllowFrom          []string `json:"allowFrom"`
	AllowFromMatchMode string   `json:"allowFromMatchMode"`
	// GroupPolicy is "mention", "open" or "allowlist" (groupAllowFrom channel
	// ids); GroupPolicyInThread the same for replies in a thread ("" = groupPolicy).
	GroupPolicy         string   `json:"groupPolicy"`
	GroupPolicyInThread string   `json:"groupPolicyInThread"`
	GroupAllowFrom      []string `json:"groupAllowFrom"`
	// ReplyInThread answers a channel post in a thread under it, the thread's own session.
	ReplyInThread bool `json:"replyInThread"`
	// IncludeThreadContext gives the model the thread's last threadContextLimit posts once.
	IncludeThreadContext bool   `json:"includeThreadContext"`
	ThreadContextLimit   int    `json:"threadContextLimit"`
	Streaming            bool   `json:"streaming"`
	StreamingMaxChars    int    `json:"streamingMaxChars" unused:"a streamed post is cut at Mattermost's 16383 characters"`
	ReactEmoji           string `json:"reactEmoji"`
	DoneEmoji            string `json:"doneEmoji"`
	SendProgress         bool   `json:"sendProgress" unused:"channels.sendProgress applies to every channel"`
	SendToolHints        bool   `json:"sendToolHints" unused:"channels.sendToolHints applies to every channel"`
	DM                   struct {
		Enabled   bool     `json:"enabled"`
		Policy    string   `json:"policy"` // "open" | "allowlist"
		AllowFrom []string `json:"allowFrom"`
	} `json:"dm"`
}

// format is how Mattermost shows a reply: it renders the model's Markdown as written.
var format = channels.Format{Hint: channels.ChatAppHint}

// The Mattermost channel: channels.mattermost in config.json.
func init() {
	channels.Register(channels.BlockSpec(channels.Spec{
		Name:   Name,
		New:    func(deps channels.Deps) (channels.Channel, error) { return New(deps) },
		Format: format,
	}, defaults))
}

// defaults are nanobot's MattermostConfig defaults.
func defaults() Config {
	c := Config{AllowFromMatchMode: "id", GroupPolicy: "mention", ReplyInThread: true, IncludeThreadContext: true,
		ThreadContextLimit: 20, Streaming: true, StreamingMaxChars: 16000, ReactEmoji: "eyes", DoneEmoji: "white_check_mark",
		SendProgress: true, SendToolHints: true}
	c.DM.Enabled, c.DM.Policy = true, "open"
	return c
}

func (c Config) On() bool { return c.Enabled }

// Allowed is allowFrom, plus dm.allowFrom when DMs are on an allowlist.
func (c Config) Allowed() channels.AllowFrom {
	list := append(channels.AllowFrom{}, c.AllowFrom...)
	if c.DM.Policy == "allowlist" {
		list = append(list, c.DM.AllowFrom...)
	}
	return list
}

func (c Config) Lacking() []string {
	return channels.Blank(Name, "serverUrl", c.ServerURL, "token", c.Token)
}

// Validate implements channels.Validator.
func (c Config) Validate(where string) error {
	policies := []string{"mention", "open", "allowlist"}
	for key, v := range map[string]string{"groupPolicy": c.GroupPolicy, "groupPolicyInThread": c.GroupPolicyInThread} {
		if v != "" && !slices.Contains(policies, v) {
			return fmt.Errorf("channels.mattermost.%s %q is not one of %s%s", key, v, strings.Join(policies, ", "), where)
		}
	}
	if !slices.Contains([]string{"id", "username", "email"}, c.AllowFromMatchMode) {
		return fmt.Errorf("channels.mattermost.allowFromMatchMode %q is not id, username or email%s", c.AllowFromMatchMode, where)
	}
	if c.DM.Policy != "open" && c.DM.Policy != "allowlist" {
		return fmt.Errorf("channels.mattermost.dm.policy %q is not open or allowlist%s", c.DM.Policy, where)
	}
	return channels.CheckURL(Name, "serverUrl", c.ServerURL, where, "http", "https")
}

// policyFor is the group policy of a post: groupPolicyInThread in a thread.
func (c Config) policyFor(inThread bool) string {
	if inThread && c.GroupPolicyInThread != "" {
		return c.GroupPolicyInThread
	}
	return c.GroupPolicy
}
