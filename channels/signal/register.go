package signal

import (
	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/markdown"
)

// format is how Signal shows a reply: plain text, with text styles that
// SendPart sends beside it (markdown.Signal).
var format = channels.Format{Markdown: func(md string) string { text, _ := markdown.Signal(md); return text }, Hint: channels.ChatAppHint}

// The Signal channel: channels.signal in config.json.
func init() {
	channels.RegisterBlock(Name, New, format, defaults)
}
