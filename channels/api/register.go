package api

import (
	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
)

// The OpenAI-compatible API: always in `nanobot serve`, in the gateway when
// api.enabled. Its API key is the gate, so it has no allow list. A request
// waits in this process, so replies come through this process's own queue.
func init() {
	channels.Register(channels.Spec{
		Name:       Name,
		Enabled:    func(cfg *config.Config) bool { return cfg.API.Enabled },
		New:        func(deps channels.Deps) (channels.Channel, error) { return New(deps) },
		PerProcess: true,
		Format:     channels.Format{Hint: "Your reply is returned by an API: plain Markdown."},
	})
}
