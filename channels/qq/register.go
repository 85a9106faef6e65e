package qq

import (
	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/markdown"
)

// format is how QQ shows a reply: plain text (msgFormat "markdown" sends
// the model's Markdown as written); nanobot's messaging-app hint.
var format = channels.Format{Markdown: markdown.PlainText,
	Hint: "Your reply is shown in a chat app: keep it short, no large headings or tables (use plain lists); Markdown is converted."}

// The QQ channel: channels.qq in config.json.
func init() {
	channels.RegisterBlock(Name, New, format, defaults)
}

func (c Config) On() bool { return c.Enabled }

// Allowed is nanobot's allowFrom: user (C2C) or member (group) openids, or "*".
func (c Config) Allowed() channels.AllowFrom { return c.AllowFrom }

func (c Config) Lacking() []string { return channels.Blank(Name, "appId", c.AppID, "secret", c.Secret) }
