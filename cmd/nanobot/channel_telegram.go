package main

import (
	"strings"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/telegram"
	"github.com/nanobot-durable/nanobot/config"
)

// The Telegram channel: channels.telegram in config.json.
func init() {
	channelSpecs = append(channelSpecs, channelSpec{
		name:    telegram.Name,
		enabled: func(c *config.Config) bool { return c.Channels.Telegram.Enabled },
		missing: func(c *config.Config) string {
			if strings.TrimSpace(c.Channels.Telegram.Token) == "" {
				return "channels.telegram.token"
			}
			return ""
		},
		build: func(d channels.Deps) (channels.Channel, error) { return telegram.New(d) },
	})
}
