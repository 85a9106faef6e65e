package weixin

import (
	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/markdown"
	"github.com/nanobot-durable/nanobot/config"
)

// format is how WeChat shows a reply: plain text.
var format = channels.Format{Markdown: markdown.PlainText, Hint: "Your reply is shown in WeChat as plain text: keep it short, no Markdown."}

// The personal WeChat channel: channels.weixin in config.json.
func init() {
	channels.Register(channels.Spec{
		Name:    Name,
		Enabled: func(cfg *config.Config) bool { return block(cfg).Enabled },
		// Without a token in the config or a stored QR login there is nobody to be.
		Missing: func(cfg *config.Config) []string {
			c := block(cfg)
			if c.Token != "" || storedLogin(c, homeOf(cfg)) {
				return nil
			}
			return []string{"a login (run: nanobot channels login weixin)"}
		},
		Check: check,
		// nanobot's allowFrom: WeChat user ids (a group's @chatroom id) or "*".
		AllowFrom: func(cfg *config.Config) channels.AllowFrom { return block(cfg).AllowFrom },
		New:       func(deps channels.Deps) (channels.Channel, error) { return New(deps) },
		Login:     login,
		Format:    format,
	})
}
