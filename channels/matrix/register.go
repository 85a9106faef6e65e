package matrix

import (
	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/markdown"
	"github.com/nanobot-durable/nanobot/config"
)

// format is how Matrix shows a reply: formatted_body HTML (the body is its plain text).
var format = channels.Format{Markdown: markdown.MatrixHTML, Hint: channels.ChatAppHint}

// The Matrix channel: channels.matrix in config.json.
func init() {
	channels.Register(channels.Spec{
		Name:    Name,
		Enabled: func(cfg *config.Config) bool { return block(cfg).Enabled },
		Missing: func(cfg *config.Config) []string { return missing(block(cfg)) },
		Check:   channels.CheckBlock(Name, defaults),
		// nanobot's allowFrom: Matrix user ids (@alice:example.org) or "*".
		AllowFrom: func(cfg *config.Config) channels.AllowFrom { return block(cfg).AllowFrom },
		New:       func(deps channels.Deps) (channels.Channel, error) { return New(deps) },
		Format:    format,
	})
}
