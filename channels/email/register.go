package email

import (
	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/markdown"
	"github.com/nanobot-durable/nanobot/config"
)

// format is how a reply is mailed: HTML (with markdown.EmailText beside it).
var format = channels.Format{Markdown: markdown.EmailHTML, Hint: "Your reply is sent as an email: plain text, complete sentences."}

// The Email channel: channels.email in config.json, IMAP in, SMTP out.
func init() {
	channels.Register(channels.Spec{
		Name: Name,
		Enabled: func(cfg *config.Config) bool {
			c, err := load(cfg)
			return err == nil && c.Enabled
		},
		Missing: func(cfg *config.Config) []string {
			c, err := load(cfg)
			if err != nil {
				return nil // Check reports it, naming the key
			}
			return c.missing()
		},
		Check: channels.CheckBlock(Name, Defaults),
		// Sender addresses, compared in lower case; "*" for anyone.
		AllowFrom: func(cfg *config.Config) channels.AllowFrom {
			c, err := load(cfg)
			if err != nil {
				return nil
			}
			return c.allowFrom()
		},
		New:    func(deps channels.Deps) (channels.Channel, error) { return New(deps) },
		Format: format,
	})
}
