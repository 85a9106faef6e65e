package weixin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nanobot-durable/nanobot/channels"
)

// pollLoop long-polls getupdates from the stored cursor, hands each
// message over, then stores the new cursor: a restart neither skips nor
// repeats. Failures back off (an answered poll resets the backoff); an
// expired login waits for a new one.
func (c *Channel) pollLoop(ctx context.Context) {
	c.Reconnect(ctx, channels.Backoff{Min: minBackoff, Max: maxBackoff, Healthy: time.Nanosecond}, c.poll)
}

// poll polls until a poll fails, and says why.
func (c *Channel) poll(ctx context.Context) error {
	timeout := time.Duration(c.cfg.PollTimeout) * time.Second
	for ctx.Err() == nil {
		if c.expired.Load() && !c.waitForLogin(ctx) {
			return ctx.Err()
		}
		next, err := c.pollOnce(ctx, timeout)
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case err == nil:
			if next > 0 {
				timeout = next
			}
			continue
		case sessionExpired(err):
			c.Down()
			if c.reloadNewerLogin() {
				continue
			}
			c.expired.Store(true)
			c.Log.Error(expiredHint, "error", err)
			continue
		}
		return fmt.Errorf("weixin poll failed: %w", err)
	}
	return ctx.Err()
}

// pollOnce is one getupdates: the messages handled in order, then the
// cursor stored. It returns the server's suggested poll length.
func (c *Channel) pollOnce(ctx context.Context, timeout time.Duration) (time.Duration, error) {
	api := c.client()
	c.mu.Lock()
	buf := c.acct.GetUpdatesBuf
	c.mu.Unlock()
	pctx, cancel := context.WithTimeout(ctx, timeout+10*time.Second)
	defer cancel()
	var u updates
	err := api.post(pctx, epGetUpdates, map[string]any{"get_updates_buf": buf}, &u)
	if err != nil {
		if errors.Is(pctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
			c.Up() // a long poll running out is the server's silence, not a failure
			return 0, nil
		}
		return 0, err
	}
	c.Up()
	for _, raw := range u.Msgs {
		if err := c.handle(ctx, raw); err != nil {
			return 0, err // the cursor stays: the batch comes again, what was taken in is deduped
		}
		if ctx.Err() != nil {
			return 0, nil // stopped mid-batch: the cursor stays, dedupe covers what was handed over
		}
	}
	if u.GetUpdatesBuf != "" && u.GetUpdatesBuf != buf {
		c.mu.Lock()
		c.acct.GetUpdatesBuf = u.GetUpdatesBuf
		c.mu.Unlock()
		c.saveAccount()
	}
	var next time.Duration
	if u.LongpollingTimeoutMS > 0 {
		next = max(time.Duration(u.LongpollingTimeoutMS)*time.Millisecond, 5*time.Second)
	}
	return next, nil
}

// reloadNewerLogin takes a token a login stored since this one was read.
func (c *Channel) reloadNewerLogin() bool {
	disk, err := loadAccount(c.dir)
	c.mu.Lock()
	old := c.acct.Token
	c.mu.Unlock()
	if err != nil || disk.Token == "" || disk.Token == old {
		return false
	}
	if err := c.loadLogin(); err != nil {
		return false
	}
	c.expired.Store(false)
	c.Log.Info("weixin: using the login stored since the session expired")
	return true
}

// waitForLogin waits, without polling WeChat, until `nanobot channels
// login weixin` stores a new token; false when ctx ends first.
func (c *Channel) waitForLogin(ctx context.Context) bool {
	t := time.NewTicker(expiredRecheck)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
			if c.reloadNewerLogin() {
				return true
			}
		}
	}
}

// decode reads one message of a getupdates batch.
func decode(raw json.RawMessage) (message, error) {
	var m message
	err := json.Unmarshal(raw, &m)
	return m, err
}
