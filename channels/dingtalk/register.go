package dingtalk

import (
	"strings"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
)

// The DingTalk channel: channels.dingtalk in config.json.
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
			if strings.TrimSpace(c.ClientID) == "" {
				keys = append(keys, "channels.dingtalk.clientId")
			}
			if strings.TrimSpace(c.ClientSecret) == "" {
				keys = append(keys, "channels.dingtalk.clientSecret")
			}
			return keys
		},
		Check: check,
		// nanobot's allowFrom: staff ids, or "*".
		AllowFrom: func(cfg *config.Config) channels.AllowFrom {
			c, _ := channels.Block(cfg, Name, defaults)
			return c.AllowFrom
		},
		New: func(deps channels.Deps) (channels.Channel, error) { return New(deps) },
	})
}
