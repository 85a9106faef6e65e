package main

import (
	"strings"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/slack"
	"github.com/nanobot-durable/nanobot/config"
)

func init() {
	channelSpecs = append(channelSpecs, channelSpec{
		name:    slack.Name,
		enabled: func(cfg *config.Config) bool { return cfg.Channels.Slack.Enabled },
		missing: func(cfg *config.Config) string {
			var keys []string
			if cfg.Channels.Slack.BotToken == "" {
				keys = append(keys, "channels.slack.botToken")
			}
			if cfg.Channels.Slack.AppToken == "" {
				keys = append(keys, "channels.slack.appToken")
			}
			return strings.Join(keys, " and ")
		},
		build: func(deps channels.Deps) (channels.Channel, error) {
			return slack.New(deps.Config, deps)
		},
	})
}
