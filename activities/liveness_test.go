package activities

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/nanobot-durable/nanobot/protocol"
)

// TestBeatsOnProgressWhenDue: a streamed chunk beats only once a beat is
// due (the SDK would batch more anyway), the ticker's beat always goes, and
// a delivery's progress rides on every beat after it is set.
func TestBeatsOnProgressWhenDue(t *testing.T) {
	var got [][]any
	now := time.Unix(0, 0)
	b := newBeater(context.Background(), time.Second, func(details ...any) { got = append(got, details) })
	b.now, b.last = func() time.Time { return now }, now
	ctx := context.WithValue(context.Background(), beaterKey{}, b)

	now = now.Add(500 * time.Millisecond)
	beatOnProgress(ctx)
	require.Empty(t, got, "a chunk half a beat after the last beat")
	now = now.Add(600 * time.Millisecond)
	beatOnProgress(ctx)
	require.Len(t, got, 1, "a chunk once a beat is due")
	b.beat(true)
	require.Len(t, got, 2, "the ticker's beat")
	setBeatDetails(ctx, "part 2 of 3")
	b.beat(true)
	require.Equal(t, []any{"part 2 of 3"}, got[2])

	beatOnProgress(context.Background()) // outside an activity with a heartbeat timeout: nothing to do
}

func TestBeatIntervalLeavesTwoBeatsOfSlack(t *testing.T) {
	require.InDelta(t, float64(protocol.HeartbeatTimeout)/3, float64(BeatInterval(protocol.HeartbeatTimeout)), float64(time.Millisecond))
	require.Equal(t, 100*time.Millisecond, BeatInterval(0))
}

// TestPacedErrorsKeepTheirBackoff: only a call that timed out (its worker
// gone) is retried at once; the calls' own retryable errors wait 1 s, 2 s…
func TestPacedErrorsKeepTheirBackoff(t *testing.T) {
	require.Equal(t, time.Second, protocol.ErrorBackoff(1))
	require.Equal(t, 4*time.Second, protocol.ErrorBackoff(3))
	require.Equal(t, time.Minute, protocol.ErrorBackoff(30))
	require.NoError(t, paced(context.Background(), nil))
	plain := errors.New("journal unreadable")
	require.Same(t, plain, paced(context.Background(), plain), "outside an activity nothing changes")
	nonRetryable := temporal.NewNonRetryableApplicationError("bad key", protocol.ErrProviderNonRetryable, nil)
	require.Same(t, nonRetryable, pacedAt(1, nonRetryable))
	var app *temporal.ApplicationError
	require.ErrorAs(t, pacedAt(2, plain), &app)
	require.Equal(t, 2*time.Second, app.NextRetryDelay())
	require.Equal(t, plain.Error(), app.Message())
	typed := temporal.NewApplicationError("rate limited", protocol.ErrProviderRetryable)
	require.ErrorAs(t, pacedAt(1, typed), &app)
	require.Equal(t, protocol.ErrProviderRetryable, app.Type())
	require.Equal(t, time.Second, app.NextRetryDelay())
	retryAfter := temporal.NewApplicationErrorWithOptions("429", protocol.ErrProviderRetryable, temporal.ApplicationErrorOptions{NextRetryDelay: 7 * time.Second})
	require.Same(t, retryAfter, pacedAt(1, retryAfter), "the provider's Retry-After stands")
}

// TestBeaterStopsWithItsActivity: stop returns only once a beat in flight
// has ended and the ticker's goroutine is gone, and nothing beats after it;
// an activity's context ending (its start-to-close timeout) ends the
// goroutine too.
func TestBeaterStopsWithItsActivity(t *testing.T) {
	var beats, finished atomic.Int32
	release := make(chan struct{})
	b := newBeater(context.Background(), time.Millisecond, func(...any) {
		if beats.Add(1) == 1 {
			<-release
		}
		finished.Add(1)
	})
	stop := b.start()
	require.Eventually(t, func() bool { return beats.Load() == 1 }, 5*time.Second, time.Millisecond)
	stopped := make(chan int32)
	go func() {
		stop()
		stopped <- finished.Load()
	}()
	require.Never(t, func() bool { return len(stopped) > 0 }, 50*time.Millisecond, time.Millisecond, "stop returned during a beat")
	close(release)
	ended := <-stopped
	require.Equal(t, beats.Load(), ended, "stop returned before the beat in flight ended")
	require.False(t, beaterRunning(), "the ticker's goroutine outlived stop")
	n := beats.Load()
	b.beat(true)
	beatOnProgress(context.WithValue(context.Background(), beaterKey{}, b))
	require.Equal(t, n, beats.Load(), "a beat after stop")

	ctx, cancel := context.WithCancel(context.Background())
	b = newBeater(ctx, time.Millisecond, func(...any) {})
	stop = b.start()
	cancel()
	require.Eventually(t, func() bool { return !beaterRunning() }, 5*time.Second, time.Millisecond, "the ticker outlived its activity's context")
	stop()
}

// beaterRunning: whether a beater's ticker goroutine is alive.
func beaterRunning() bool {
	buf := make([]byte, 1<<20)
	return strings.Contains(string(buf[:runtime.Stack(buf, true)]), "activities.(*beater).run")
}
