package channels

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// receiveLoop is a channel's receive goroutine (long polling, a sync long poll,
// IMAP IDLE): started by the channel's Start, cancelled and waited for,
// within a bound, by its Stop. The Base holds a channel's (Receive, Stop).
type receiveLoop struct {
	mu     sync.Mutex
	run    context.Context
	cancel context.CancelFunc
	done   chan struct{}
}

// Go runs fn on its own goroutine under a context of ctx that Stop
// cancels, and returns that context (for calls made on the loop's behalf).
func (l *receiveLoop) Go(ctx context.Context, fn func(context.Context)) context.Context {
	run, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	l.mu.Lock()
	l.run, l.cancel, l.done = run, cancel, done
	l.mu.Unlock()
	go func() {
		defer close(done)
		fn(run)
	}()
	return run
}

// Call bounds a call made on the channel's own behalf (an approval's
// edit, a typing indicator): it ends after within, or with the loop.
func (l *receiveLoop) Call(within time.Duration) (context.Context, context.CancelFunc) {
	l.mu.Lock()
	parent := l.run
	l.mu.Unlock()
	if parent == nil { // not started: bounded by within alone
		parent = context.Background()
	}
	return context.WithTimeout(parent, within)
}

// Stop cancels the loop and waits for it to end, up to within or until
// ctx ends; what names the loop in the error. A loop never started stops
// at once.
func (l *receiveLoop) Stop(ctx context.Context, within time.Duration, what string) error {
	l.mu.Lock()
	cancel, done := l.cancel, l.done
	l.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	wait := time.NewTimer(within)
	defer wait.Stop()
	select {
	case <-done:
		return nil
	case <-wait.C:
		return fmt.Errorf("%s did not stop in time", what)
	case <-ctx.Done():
		return fmt.Errorf("%s did not stop: %w", what, ctx.Err())
	}
}

// StopWithin is how long a channel's Stop waits for its receive loop.
const StopWithin = 10 * time.Second

// Receive attaches publish (TakeIn's way to the agent) and runs the
// channel's receive loop on its own goroutine, under a context of ctx that
// Stop cancels; what names the loop in Stop's error. It returns the loop's
// context, for calls made on the loop's behalf. A Start after a Stop
// runs the loop again.
func (b *Base) Receive(ctx context.Context, publish Publish, what string, loop func(context.Context)) context.Context {
	b.Attach(publish)
	b.mu.Lock()
	b.loopName = what
	b.mu.Unlock()
	return b.loop.Go(ctx, loop)
}

// Serve is Receive of the usual loop: Reconnect holding the platform's
// connection through connect, spaced by bo.
func (b *Base) Serve(ctx context.Context, publish Publish, what string, bo Backoff, connect func(context.Context) error) {
	b.Receive(ctx, publish, what, func(ctx context.Context) { b.Reconnect(ctx, bo, connect) })
}

// Stop implements Channel for a channel whose receive loop is all it
// runs: the loop is cancelled and waited for, up to StopWithin, and the
// channel is down. A channel with more to stop has its own Stop, which
// calls this one (or StopLoop). Before Start it returns at once.
func (b *Base) Stop(ctx context.Context) error { return b.StopLoop(ctx, StopWithin) }

// StopLoop is Stop waiting up to within for the receive loop.
func (b *Base) StopLoop(ctx context.Context, within time.Duration) error {
	b.mu.Lock()
	what := b.loopName
	b.mu.Unlock()
	err := b.loop.Stop(ctx, within, what)
	b.Down()
	return err
}

// Call bounds a call made on the channel's own behalf (an approval's
// edit, a typing indicator): it ends after within, or with the receive loop.
func (b *Base) Call(within time.Duration) (context.Context, context.CancelFunc) {
	return b.loop.Call(within)
}
