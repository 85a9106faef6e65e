package signal

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/sse"
)

// silenceLimit: the daemon sends a keep-alive every 15 s; a stream silent
// for longer is dead, and is reopened.
const silenceLimit = 45 * time.Second

// untilStopped: the stream has no redelivery of its own before a first id
// is known, so a message is handed over until the agent takes it.
const untilStopped = time.Duration(math.MaxInt64)

// stream is one connection to GET /api/v1/events, read until it ends. It
// asks for what came after the last event handed over (the daemon keeps
// its last 1000 events); that id is kept in the channel's state, so a
// restarted gateway resumes after it.
func (c *Channel) stream(ctx context.Context) error {
	last, err := c.cursor.Load()
	if err != nil {
		c.Log.Warn("signal last event id not read; resuming from new events only", "error", err)
	}
	s, err := sse.Open(ctx, c.events, c.cfg.daemonURL()+"/api/v1/events", last)
	if err != nil {
		return fmt.Errorf("signal-cli daemon not reachable (is `signal-cli -a %s daemon --http %s:%d` running?): %w",
			c.cfg.PhoneNumber, c.cfg.DaemonHost, c.cfg.DaemonPort, err)
	}
	defer s.Close()
	c.Up()
	c.Log.Info("signal-cli event stream open", "daemon", c.cfg.daemonURL(), "after", last)
	c.enableTyping(ctx)
	return s.Each(silenceLimit, c.Touch, func(ev sse.Event) error {
		if ev.Data != "" && !channels.Handed(c.handle(ctx, ev.ID, ev.Data)) {
			return ctx.Err() // stopped while the agent did not take it
		}
		if ev.ID != "" {
			c.cursor.Save(ev.ID)
		}
		return nil
	})
}

// enableTyping turns the account's typing indicators on, as nanobot does
// on connecting (best effort: replies go out without).
func (c *Channel) enableTyping(ctx context.Context) {
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if err := c.rpc.Call(cctx, "updateConfiguration", map[string]any{"typingIndicators": true}, nil); err != nil {
		c.Log.Warn("signal typing indicators not enabled", "error", err)
	}
}
