package whatsapp

import (
	"context"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
)

// The WhatsApp channel: channels.whatsapp in config.json. It needs no
// key: its credentials are the device paired by `nanobot channels login whatsapp`.
func init() {
	channels.Register(channels.Spec{
		Name:    Name,
		Enabled: func(cfg *config.Config) bool { return block(cfg).Enabled },
		Check:   check,
		// nanobot's allowFrom: phone numbers (any spelling), LIDs, or "*".
		AllowFrom: func(cfg *config.Config) channels.AllowFrom { return allowList(block(cfg).AllowFrom) },
		New:       func(deps channels.Deps) (channels.Channel, error) { return New(deps) },
		Login:     func(ctx context.Context, l channels.LoginDeps) error { return login(ctx, l, openWhatsmeow) },
	})
}
