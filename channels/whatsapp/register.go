package whatsapp

import (
	"context"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/markdown"
)

// format is how WhatsApp shows a reply: its own marks; the hint is nanobot's.
var format = channels.Format{Markdown: markdown.WhatsApp,
	Hint: "Your reply is shown in a text messaging app that does not render Markdown: plain text only."}

// The WhatsApp channel: channels.whatsapp in config.json. It needs no
// key: its credentials are the device paired by `nanobot channels login whatsapp`.
func init() {
	channels.Register(channels.BlockSpec(channels.Spec{
		Name:   Name,
		Check:  check, // also names the old bridge's keys as ignored
		New:    func(deps channels.Deps) (channels.Channel, error) { return New(deps) },
		Login:  func(ctx context.Context, l channels.LoginDeps) error { return login(ctx, l, openWhatsmeow) },
		Format: format,
	}, defaults))
}

func (c Config) On() bool { return c.Enabled }

// Allowed is nanobot's allowFrom: phone numbers (any spelling), LIDs, or "*".
func (c Config) Allowed() channels.AllowFrom { return allowList(c.AllowFrom) }

// Lacking is nothing: a device not yet paired is reported by the channel at start.
func (c Config) Lacking() []string { return nil }
