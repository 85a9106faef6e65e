package wecom

import (
	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/markdown"
)

// format is how WeCom shows a reply: its AI bot's Markdown.
var format = channels.Format{Markdown: markdown.WeCom, Hint: channels.ChatAppHint}

// The WeCom channel: channels.wecom in config.json.
func init() {
	channels.RegisterBlock(Name, New, format, defaults)
}

func (c Config) On() bool { return c.Enabled }

// Allowed is nanobot's allowFrom: WeCom userids, or "*".
func (c Config) Allowed() channels.AllowFrom { return c.AllowFrom }

func (c Config) Lacking() []string { return channels.Blank(Name, "botId", c.BotID, "secret", c.Secret) }
