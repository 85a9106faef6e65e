package telegram

import (
	"strings"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/markdown"
	"github.com/nanobot-durable/nanobot/config"
)

// format is how Telegram shows a reply: Telegram's HTML.
var format = channels.Format{Markdown: markdown.TelegramHTML, Hint: channels.ChatAppHint}

// The Telegram channel: channels.telegram in config.json.
func init() {
	channels.Register(channels.Spec{
		Name:    Name,
		Enabled: func(cfg *config.Config) bool { return cfg.Channels.Telegram.Enabled },
		Missing: func(cfg *config.Config) []string {
			if strings.TrimSpace(cfg.Channels.Telegram.Token) == "" {
				return []string{"channels.telegram.token"}
			}
			return nil
		},
		// nanobot's allowFrom: "*", an id, a username, or "id|username".
		AllowFrom: func(cfg *config.Config) channels.AllowFrom { return cfg.Channels.Telegram.AllowFrom },
		New:       func(deps channels.Deps) (channels.Channel, error) { return New(deps) },
		Format:    format,
	})
}
