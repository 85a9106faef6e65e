package signal

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/nanobot-durable/nanobot/channels"
)

// silenceLimit: the daemon sends a keep-alive every 15 s; a stream silent
// for longer is dead, and is reopened.
const silenceLimit = 45 * time.Second

// lastEventKey names the last event handed over in the channel's state.
const lastEventKey = "lastEventId"

// stream is one connection to GET /api/v1/events, read until it ends. It
// asks for what came after the last event handed over (the daemon keeps
// its last 1000 events); that id is kept in the state file, so a restarted
// gateway resumes after it.
func (c *Channel) stream(ctx context.Context) error {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(sctx, http.MethodGet, c.cfg.daemonURL()+"/api/v1/events", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	last := c.lastEventID()
	if last != "" {
		req.Header.Set("Last-Event-ID", last)
	}
	resp, err := c.events.Do(req)
	if err != nil {
		return fmt.Errorf("signal-cli daemon not reachable (is `signal-cli -a %s daemon --http %s:%d` running?): %w",
			c.cfg.PhoneNumber, c.cfg.DaemonHost, c.cfg.DaemonPort, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET /api/v1/events: HTTP %s", resp.Status)
	}
	c.Up()
	c.Log.Info("signal-cli event stream open", "daemon", c.cfg.daemonURL(), "after", last)
	c.enableTyping(ctx)
	watchdog := time.AfterFunc(silenceLimit, cancel)
	defer watchdog.Stop()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var id string
	var data []string
	for sc.Scan() {
		watchdog.Reset(silenceLimit)
		c.Touch()
		line := sc.Text()
		if line == "" { // the end of an event
			if len(data) > 0 {
				watchdog.Stop() // the daemon holds its events while one is handed over
				if err := c.handOver(ctx, id, strings.Join(data, "\n")); err != nil {
					return err
				}
				watchdog.Reset(silenceLimit)
			}
			if id != "" {
				c.setLastEventID(id)
			}
			id, data = "", nil
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "id":
			id = value
		case "data":
			data = append(data, value)
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return errors.New("the daemon closed the stream")
}

// handOver hands one event's message over, again and again while the
// agent does not take it (Temporal unreachable), until ctx ends: the
// stream has no redelivery of its own before a first id is known.
func (c *Channel) handOver(ctx context.Context, id, data string) error {
	delay := time.Second
	for !channels.Handed(c.handle(ctx, id, data)) {
		if !channels.Sleep(ctx, delay) {
			return ctx.Err()
		}
		delay = min(delay*2, 30*time.Second)
	}
	return nil
}

// enableTyping turns the account's typing indicators on, as nanobot does
// on connecting (best effort: replies go out without).
func (c *Channel) enableTyping(ctx context.Context) {
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if err := c.rpc.call(cctx, "updateConfiguration", map[string]any{"typingIndicators": true}, nil); err != nil {
		c.Log.Warn("signal typing indicators not enabled", "error", err)
	}
}

// lastEventID is the id of the last event handed over, kept in the
// channel's state so a restarted gateway resumes after it.
func (c *Channel) lastEventID() string {
	id, err := c.state.Get(lastEventKey)
	if err != nil {
		c.Log.Warn("signal last event id not read; resuming from new events only", "error", err)
	}
	return id
}

func (c *Channel) setLastEventID(id string) {
	if err := c.state.Put(lastEventKey, id); err != nil {
		c.Log.Warn("signal last event id not saved; a restart resumes from new events only", "error", err)
	}
}
