package feishu

import (
	"github.com/nanobot-durable/nanobot/channels"
)

// partOf is a reply's only text part.
func partOf(text string) channels.Part { return channels.Part{Text: text, Last: true} }
