package main

import (
	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/api"
	"github.com/nanobot-durable/nanobot/config"
)

// The OpenAI-compatible API: always in `nanobot serve`, in the gateway when
// api.enabled. A request waits in this process, so replies come through
// this process's own queue.
func init() {
	channelSpecs = append(channelSpecs, channelSpec{
		name:       api.Name,
		enabled:    func(cfg *config.Config) bool { return cfg.API.Enabled },
		build:      func(deps channels.Deps) (channels.Channel, error) { return api.New(deps) },
		perProcess: true,
	})
}
