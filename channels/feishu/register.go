package feishu

import "github.com/nanobot-durable/nanobot/channels"

// The Feishu / Lark channel: channels.feishu in config.json.
func init() {
	channels.Register(channels.BlockSpec(channels.Spec{
		Name:  Name,
		New:   func(deps channels.Deps) (channels.Channel, error) { return New(deps) },
		Login: login, // nanobot's scan-to-create QR onboarding
		// replies are cards built from the Markdown's tree (markdown.FeishuCard)
		Format: channels.Format{Hint: channels.ChatAppHint},
	}, defaults))
}

func (c Config) On() bool { return c.Enabled }

// Allowed is nanobot's allowFrom: the senders' open_ids, or "*".
func (c Config) Allowed() channels.AllowFrom { return c.AllowFrom }

func (c Config) Lacking() []string {
	return channels.Blank(Name, "appId", c.AppID, "appSecret", c.AppSecret)
}
