package main

import (
	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/web"
)

// useTemporal gives the web chat the client it asks where turns are, and
// the Web UI it links them to.
func useTemporal(mgr *channels.Manager, r *runtimeEnv) {
	if c, ok := mgr.Get(web.Name); ok {
		if w, ok := c.(*web.Channel); ok {
			w.UseTemporal(web.TemporalTurns{Client: r.conn.Client, Instance: r.cfg.Instance()}, r.conn.UIURL, r.conn.Namespace)
			w.UseAutomations(web.TemporalAutomations{Client: r.conn.Client, Instance: r.cfg.Instance()})
		}
	}
}
