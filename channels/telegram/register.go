package telegram

import (
	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/markdown"
)

// format is how Telegram shows a reply: Telegram's HTML.
var format = channels.Format{Markdown: markdown.TelegramHTML, Hint: channels.ChatAppHint}

// The Telegram channel: channels.telegram in config.json.
func init() {
	channels.RegisterBlock(Name, New, format, defaults)
}
