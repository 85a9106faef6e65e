package email

import (
	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/markdown"
)

// format is how a reply is mailed: HTML (with markdown.EmailText beside it).
var format = channels.Format{Markdown: markdown.EmailHTML, Hint: "Your reply is sent as an email: plain text, complete sentences."}

// The Email channel: channels.email in config.json, IMAP in, SMTP out.
func init() {
	channels.RegisterBlock(Name, New, format, Defaults)
}

func (c Config) On() bool { return c.Enabled }

// Allowed are the sender addresses, compared in lower case; "*" for anyone.
func (c Config) Allowed() channels.AllowFrom { return c.allowFrom() }

func (c Config) Lacking() []string { return c.missing() }

// Validate implements channels.Validator: the block's types are its only check.
func (c Config) Validate(string) error { return nil }
