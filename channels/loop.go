package channels

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Loop is a channel's receive goroutine (long polling, a sync long poll,
// IMAP IDLE): started once by the channel's Start, cancelled and waited
// for, within a bound, by its Stop.
type Loop struct {
	mu     sync.Mutex
	run    context.Context
	cancel context.CancelFunc
	done   chan struct{}
}

// Go runs fn on its own goroutine under a context of ctx that Stop
// cancels, and returns that context (for calls made on the loop's behalf).
func (l *Loop) Go(ctx context.Context, fn func(context.Context)) context.Context {
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
func (l *Loop) Call(within time.Duration) (context.Context, context.CancelFunc) {
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
func (l *Loop) Stop(ctx context.Context, within time.Duration, what string) error {
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
