package matrix

import (
	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/markdown"
)

// format is how Matrix shows a reply: formatted_body HTML (the body is its plain text).
var format = channels.Format{Markdown: markdown.MatrixHTML, Hint: channels.ChatAppHint}

// The Matrix channel: channels.matrix in config.json.
func init() {
	channels.Register(channels.BlockSpec(channels.Spec{
		Name:   Name,
		New:    func(deps channels.Deps) (channels.Channel, error) { return New(deps) },
		Format: format,
	}, defaults))
}

func (c Config) On() bool { return c.Enabled }

// Allowed is nanobot's allowFrom: Matrix user ids (@alice:example.org) or "*".
func (c Config) Allowed() channels.AllowFrom { return c.AllowFrom }

func (c Config) Lacking() []string { return missing(c) }

// Validate implements channels.Validator: the block's types are its only check.
func (c Config) Validate(string) error { return nil }
