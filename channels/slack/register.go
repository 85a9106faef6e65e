package slack

import (
	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/markdown"
)

// format is how Slack shows a reply: mrkdwn.
var format = channels.Format{Markdown: markdown.SlackMrkdwn, Hint: channels.ChatAppHint}

// The Slack channel: channels.slack in config.json, Socket Mode.
func init() {
	channels.Register(channels.BlockSpec(channels.Spec{
		Name:   Name,
		New:    func(deps channels.Deps) (channels.Channel, error) { return New(deps.Config, deps) },
		Format: format,
	}, defaults))
}
