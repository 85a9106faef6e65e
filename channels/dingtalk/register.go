package dingtalk

import (
	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/markdown"
)

// format is how DingTalk shows a reply: its markdown messages.
var format = channels.Format{Markdown: markdown.DingTalk, Hint: channels.ChatAppHint}

// The DingTalk channel: channels.dingtalk in config.json.
func init() {
	channels.RegisterBlock(Name, New, format, defaults)
}

func (c Config) On() bool { return c.Enabled }

// Allowed is nanobot's allowFrom: staff ids, or "*".
func (c Config) Allowed() channels.AllowFrom { return c.AllowFrom }

func (c Config) Lacking() []string {
	return channels.Blank(Name, "clientId", c.ClientID, "clientSecret", c.ClientSecret)
}
