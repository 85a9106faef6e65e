package main

import (
	"os"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/web"
	"github.com/nanobot-durable/nanobot/config"
)

// The web chat: on by default when the gateway runs on a local Temporal
// (TEMPORAL_ADDRESS unset), where a newcomer has nothing else to talk to.
// Replies go through the channel's shared queue, so one that finishes while
// no gateway runs is delivered by the next.
func init() {
	channelSpecs = append(channelSpecs, channelSpec{
		name:    web.Name,
		enabled: func(cfg *config.Config) bool { return cfg.Channels.Web.EnabledOr(os.Getenv("TEMPORAL_ADDRESS") == "") },
		build:   func(deps channels.Deps) (channels.Channel, error) { return web.New(deps) },
	})
}

// useTemporal gives the web chat the client it asks where turns are, and
// the Web UI it links them to.
func useTemporal(mgr *channels.Manager, r *runtimeEnv) {
	if c, ok := mgr.Get(web.Name); ok {
		if w, ok := c.(*web.Channel); ok {
			w.UseTemporal(web.TemporalTurns{Client: r.conn.Client}, r.conn.UIURL, r.conn.Namespace)
		}
	}
}
