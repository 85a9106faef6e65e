package teams

import "github.com/nanobot-durable/nanobot/channels"

// format is how Teams shows a reply: its own Markdown, as the model writes it.
var format = channels.Format{Hint: "Your reply is shown in Microsoft Teams: keep it short; Markdown (bold, lists, links, code) renders."}

// The Teams channel: channels.msteams in config.json.
func init() {
	channels.RegisterBlock(Name, New, format, defaults)
}
