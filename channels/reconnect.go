package channels

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"time"
)

// Backoff spaces a channel's attempts to hold its platform's connection.
// The zero value is the usual: 1 s doubling to a minute, reset once a
// connection has stayed up for 30 s.
type Backoff struct {
	Min, Max time.Duration
	// Healthy is how long a connection stays up before a drop counts as
	// the platform's ordinary churn (the next wait is Min again) rather
	// than one more failure.
	Healthy time.Duration
}

func (b Backoff) withDefaults() Backoff {
	if b.Min <= 0 {
		b.Min = time.Second
	}
	if b.Max < b.Min {
		b.Max = max(time.Minute, b.Min)
	}
	if b.Healthy <= 0 {
		b.Healthy = 30 * time.Second
	}
	return b
}

// jitter is d less up to half of it, so gateways that lost the platform
// together do not come back in step.
func jitter(d time.Duration) time.Duration {
	if d <= 1 {
		return d
	}
	return d - rand.N(d/2)
}

// connError is how a connection tells Reconnect to stop or when to come back.
type connError struct {
	err   error
	fatal bool
	wait  time.Duration
}

func (e *connError) Error() string { return e.err.Error() }
func (e *connError) Unwrap() error { return e.err }

// Fatal marks a connection's end that trying again cannot mend (the bot is
// banned, its credentials refused): Reconnect says so once, and stops.
func Fatal(err error) error { return &connError{err: err, fatal: true} }

// RetryIn marks a drop the platform asked for or explained (a reconnect
// request: 0; another connection took the bot over: minutes): Reconnect
// waits d, and the backoff is left as it was.
func RetryIn(d time.Duration, err error) error { return &connError{err: err, wait: d} }

// Reconnect holds the platform's connection until ctx ends: connect is one
// connection (dial, handshake, read until it drops), which calls b.Up once
// it holds the platform and returns why it ended; Reconnect marks the
// channel down, waits with jittered exponential backoff, and connects again.
// A connection that stayed up for bo.Healthy resets the backoff.
func (b *Base) Reconnect(ctx context.Context, bo Backoff, connect func(ctx context.Context) error) {
	bo = bo.withDefaults()
	delay := bo.Min
	for ctx.Err() == nil {
		err := connect(ctx)
		b.Down()
		upFor := b.upFor()
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			err = errors.New("the connection ended")
		}
		if upFor >= bo.Healthy {
			delay = bo.Min
		}
		wait := jitter(delay)
		var ce *connError
		switch {
		case errors.As(err, &ce) && ce.fatal:
			b.Log.Error(b.name+" stopped: the platform refused the bot; fix it and restart the gateway", "error", err)
			return
		case errors.As(err, &ce):
			wait = ce.wait
			level := slog.LevelWarn
			if wait == 0 {
				level = slog.LevelInfo // the platform asked for it
			}
			b.Log.Log(ctx, level, b.name+" reconnecting", "reason", err, "in", wait)
		case upFor > 0:
			b.Log.Warn(b.name+" connection dropped; reconnecting", "error", err, "in", wait, "was_up", upFor.Round(time.Millisecond))
			delay = min(delay*2, bo.Max)
		default:
			b.Log.Warn(b.name+" cannot connect; retrying", "error", err, "in", wait)
			delay = min(delay*2, bo.Max)
		}
		if !reconnectSleep(ctx, wait) {
			return
		}
	}
}

// reconnectSleep is Sleep; tests read the waits through it.
var reconnectSleep = Sleep

// Sleep waits d or until ctx ends; false when ctx ended.
func Sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
