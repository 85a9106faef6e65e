package feishu

import (
	"strings"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
)

// The Feishu / Lark channel: channels.feishu in config.json.
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
				keys = append(keys, "channels.feishu.appId")
			}
			if strings.TrimSpace(c.AppSecret) == "" {
				keys = append(keys, "channels.feishu.appSecret")
			}
			return keys
		},
		Check: check,
		// nanobot's allowFrom: the senders' open_ids, or "*".
		AllowFrom: func(cfg *config.Config) channels.AllowFrom {
			c, _ := channels.Block(cfg, Name, defaults)
			return c.AllowFrom
		},
		New:   func(deps channels.Deps) (channels.Channel, error) { return New(deps) },
		Login: login, // nanobot's scan-to-create QR onboarding
	})
}
