package wecom

import (
	"strings"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
)

// The WeCom channel: channels.wecom in config.json.
func init() {
	channels.Register(channels.Spec{
		Name: Name,
		Enabled: func(cfg *config.Config) bool {
			c, err := channels.Block(cfg, Name, defaults)
			return err == nil && c.Enabled
		},
		Missing: func(cfg *config.Config) []string {
			c, _ := channels.Block(cfg, Name, defaults)
			var keys []string
			if strings.TrimSpace(c.BotID) == "" {
				keys = append(keys, "channels.wecom.botId")
			}
			if strings.TrimSpace(c.Secret) == "" {
				keys = append(keys, "channels.wecom.secret")
			}
			return keys
		},
		Check: check,
		// nanobot's allowFrom: WeCom userids, or "*".
		AllowFrom: func(cfg *config.Config) channels.AllowFrom {
			c, _ := channels.Block(cfg, Name, defaults)
			return c.AllowFrom
		},
		New: func(deps channels.Deps) (channels.Channel, error) { return New(deps) },
	})
}
