package qq

import (
	"strings"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
)

// The QQ channel: channels.qq in config.json.
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
			if strings.TrimSpace(c.AppID) == "" {
				keys = append(keys, "channels.qq.appId")
			}
			if strings.TrimSpace(c.Secret) == "" {
				keys = append(keys, "channels.qq.secret")
			}
			return keys
		},
		Check: channels.CheckValidBlock(Name, defaults),
		// nanobot's allowFrom: user (C2C) or member (group) openids, or "*".
		AllowFrom: func(cfg *config.Config) channels.AllowFrom {
			c, _ := channels.Block(cfg, Name, defaults)
			return c.AllowFrom
		},
		New: func(deps channels.Deps) (channels.Channel, error) { return New(deps) },
	})
}
