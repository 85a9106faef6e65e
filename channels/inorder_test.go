package channels

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestInOrderHandlesEveryEventOnceInOrderWhilePushNeverWaits: the handler
// is held while far more events than the old channels' buffers (256) are
// pushed; every Push returns, the backlog is warned about, and once let go
// the handler gets each event once, in the order pushed, one at a time.
func TestInOrderHandlesEveryEventOnceInOrderWhilePushNeverWaits(t *testing.T) {
	logs := &lockedBuffer{}
	hold := make(chan struct{})
	var mu sync.Mutex
	var got []int
	busy, overlapped := 0, false
	q := NewInOrder(slog.New(slog.NewTextHandler(logs, nil)), "test events", func(_ context.Context, n int) {
		mu.Lock()
		busy++
		overlapped = overlapped || busy > 1
		mu.Unlock()
		if n == 0 {
			<-hold
		}
		mu.Lock()
		got = append(got, n)
		busy--
		mu.Unlock()
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wait := q.Go(ctx)

	const events = 1000
	pushed := make(chan struct{})
	go func() {
		defer close(pushed)
		for n := range events {
			q.Push(n)
		}
	}()
	select {
	case <-pushed:
	case <-time.After(10 * time.Second):
		t.Fatal("Push waited for the handler")
	}
	close(hold)

	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) == events
	}, 10*time.Second, time.Millisecond, "every event pushed is handled")
	require.Contains(t, logs.String(), "backlog=256", "the backlog is warned about")
	require.False(t, overlapped, "one event at a time")
	for n := range events {
		require.Equal(t, n, got[n], "event %d out of order", n)
	}
	cancel()
	wait()
}

// TestInOrderStopsWithItsContext: Run ends with ctx, the backlog left
// for the next Run; what was pushed before a Run is handled by it.
func TestInOrderStopsWithItsContext(t *testing.T) {
	handled := make(chan int, 10)
	q := NewInOrder(slog.New(slog.DiscardHandler), "test events", func(ctx context.Context, n int) {
		handled <- n
		if n == 1 {
			<-ctx.Done()
		}
	})
	q.Push(1)
	q.Push(2)
	ctx, cancel := context.WithCancel(context.Background())
	wait := q.Go(ctx)
	require.Equal(t, 1, <-handled)
	cancel()
	wait()
	require.Empty(t, handled, "nothing is handled after ctx ended")

	again, stop := context.WithCancel(context.Background())
	defer stop()
	q.Go(again)
	require.Equal(t, 2, <-handled)
}
