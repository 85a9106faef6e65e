package web

import (
	"os"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
)

// The web chat: on by default when the gateway runs on a local Temporal
// (TEMPORAL_ADDRESS unset), where a newcomer has nothing else to talk to.
// Its token (or the loopback bind) is the gate, so it has no allow list.
// Replies go through the channel's shared queue, so one that finishes while
// no gateway runs is delivered by the next.
func init() {
	channels.Register(channels.Spec{
		Name: Name,
		Enabled: func(cfg *config.Config) bool {
			c, err := ReadConfig(cfg)
			return err == nil && c.EnabledOr(os.Getenv("TEMPORAL_ADDRESS") == "")
		},
		Check: checkConfig,
		New:   func(deps channels.Deps) (channels.Channel, error) { return New(deps) },
		// the page's own small Markdown (static/chat.js): no tables
		Format: channels.Format{Hint: "Your reply is shown in a web chat: Markdown with code blocks, lists, bold and links, no tables."},
	})
}
