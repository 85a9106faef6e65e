package slack

import (
	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/markdown"
	"github.com/nanobot-durable/nanobot/config"
)

// format is how Slack shows a reply: mrkdwn.
var format = channels.Format{Markdown: markdown.SlackMrkdwn, Hint: channels.ChatAppHint}

// The Slack channel: channels.slack in config.json, Socket Mode.
func init() {
	channels.Register(channels.Spec{
		Name:    Name,
		Enabled: func(cfg *config.Config) bool { return cfg.Channels.Slack.Enabled },
		Missing: func(cfg *config.Config) []string {
			var keys []string
			if cfg.Channels.Slack.BotToken == "" {
				keys = append(keys, "channels.slack.botToken")
			}
			if cfg.Channels.Slack.AppToken == "" {
				keys = append(keys, "channels.slack.appToken")
			}
			return keys
		},
		AllowFrom: func(cfg *config.Config) channels.AllowFrom { return allowFrom(cfg.Channels.Slack) },
		New:       func(deps channels.Deps) (channels.Channel, error) { return New(deps.Config, deps) },
		Format:    format,
	})
}
