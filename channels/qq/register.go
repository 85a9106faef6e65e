package qq

import "github.com/nanobot-durable/nanobot/channels"

// The QQ channel: channels.qq in config.json.
func init() {
	channels.Register(channels.BlockSpec(channels.Spec{
		Name: Name,
		New:  func(deps channels.Deps) (channels.Channel, error) { return New(deps) },
	}, defaults))
}

func (c Config) On() bool { return c.Enabled }

// Allowed is nanobot's allowFrom: user (C2C) or member (group) openids, or "*".
func (c Config) Allowed() channels.AllowFrom { return c.AllowFrom }

func (c Config) Lacking() []string { return channels.Blank(Name, "appId", c.AppID, "secret", c.Secret) }
