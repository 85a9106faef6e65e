package channels

import (
	"context"
	"log/slog"
	"sync"
)

// behind is the backlog at which (and at every multiple of which) InOrder
// warns that its handler is behind the platform.
const behind = 256

// InOrder hands a channel's events to one handler, one at a time, in the
// order the platform sent them, off the goroutine that reads them: a slow
// publish never holds up the socket (its heartbeats, its acks). Push never
// waits and never drops: a backlog only grows, and is warned about.
type InOrder[T any] struct {
	handle func(context.Context, T)
	log    *slog.Logger
	what   string

	mu      sync.Mutex
	pending []T
	wake    chan struct{} // holds a token while pending may be non-empty
}

// NewInOrder is a queue of events for handle; what names them in the
// backlog warning ("dingtalk robot messages").
func NewInOrder[T any](log *slog.Logger, what string, handle func(context.Context, T)) *InOrder[T] {
	return &InOrder[T]{handle: handle, log: log, what: what, wake: make(chan struct{}, 1)}
}

// Push queues ev behind the events pushed before it.
func (q *InOrder[T]) Push(ev T) {
	q.mu.Lock()
	q.pending = append(q.pending, ev)
	n := len(q.pending)
	q.mu.Unlock()
	if n%behind == 0 {
		q.log.Warn(q.what+": the handler is behind; events wait in memory", "backlog", n)
	}
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// Run handles the events pushed, in order, until ctx ends; what is still
// queued then is left (the platform's redelivery, where it has one, brings
// back what was not acknowledged).
func (q *InOrder[T]) Run(ctx context.Context) {
	for {
		for ctx.Err() == nil {
			ev, ok := q.next()
			if !ok {
				break
			}
			q.handle(ctx, ev)
		}
		select {
		case <-ctx.Done():
			return
		case <-q.wake:
		}
	}
}

// Go runs Run on a goroutine of its own and returns a wait for its end
// (which comes once ctx ends and the event in hand is handled).
func (q *InOrder[T]) Go(ctx context.Context) (wait func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		q.Run(ctx)
	}()
	return func() { <-done }
}

// next takes the oldest event off the queue.
func (q *InOrder[T]) next() (T, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	var zero T
	if len(q.pending) == 0 {
		q.pending = nil // the handled prefix's array goes with it
		return zero, false
	}
	ev := q.pending[0]
	q.pending[0] = zero
	q.pending = q.pending[1:]
	return ev, true
}
