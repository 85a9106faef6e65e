package discord

import (
	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/markdown"
)

// format is how Discord shows a reply: its own Markdown (__ underlines,
// no tables, headings to ###).
var format = channels.Format{Markdown: markdown.Discord, Hint: channels.ChatAppHint}

// The Discord channel: channels.discord in config.json.
func init() {
	channels.RegisterBlock(Name, New, format, defaults)
}

func (c Config) On() bool { return c.Enabled }

// Allowed is nanobot's allowFrom: Discord user ids, or "*".
func (c Config) Allowed() channels.AllowFrom { return c.AllowFrom }

func (c Config) Lacking() []string { return channels.Blank(Name, "token", c.Token) }
