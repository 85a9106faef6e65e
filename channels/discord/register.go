package discord

import (
	"strings"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
)

// The Discord channel: channels.discord in config.json.
func init() {
	channels.Register(channels.Spec{
		Name: Name,
		Enabled: func(cfg *config.Config) bool {
			c, err := channels.Block(cfg, Name, defaults)
			return err == nil && c.Enabled
		},
		Missing: func(cfg *config.Config) []string {
			c, _ := channels.Block(cfg, Name, defaults)
			if strings.TrimSpace(c.Token) == "" {
				return []string{"channels.discord.token"}
			}
			return nil
		},
		Check: check,
		// nanobot's allowFrom: Discord user ids, or "*".
		AllowFrom: func(cfg *config.Config) channels.AllowFrom {
			c, _ := channels.Block(cfg, Name, defaults)
			return c.AllowFrom
		},
		New: func(deps channels.Deps) (channels.Channel, error) { return New(deps) },
	})
}
