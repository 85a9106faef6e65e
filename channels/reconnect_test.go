package channels

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func testBase(logs *lockedBuffer) *Base {
	b := &Base{}
	b.Init("test", slog.New(slog.NewTextHandler(logs, nil)), nil)
	return b
}

func TestBackoffDoublesJittersAndResetsAfterHealthy(t *testing.T) {
	bo := Backoff{Min: 8 * time.Millisecond, Max: 64 * time.Millisecond, Healthy: time.Hour}.withDefaults()
	for range 100 {
		d := jitter(bo.Min)
		require.GreaterOrEqual(t, d, bo.Min/2)
		require.LessOrEqual(t, d, bo.Min)
	}
	require.Equal(t, Backoff{Min: time.Second, Max: time.Minute, Healthy: 30 * time.Second}, Backoff{}.withDefaults())
}

func TestReconnectUntilCancelled(t *testing.T) {
	logs := &lockedBuffer{}
	b := testBase(logs)
	ctx, cancel := context.WithCancel(context.Background())
	attempts := 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.Reconnect(ctx, Backoff{Min: time.Millisecond, Max: 4 * time.Millisecond}, func(ctx context.Context) error {
			attempts++
			if attempts < 3 {
				return errors.New("refused connection")
			}
			b.Up()
			<-ctx.Done()
			return ctx.Err()
		})
	}()
	require.Eventually(t, b.Connected, 5*time.Second, time.Millisecond, "connected on the third attempt")
	cancel()
	<-done
	require.False(t, b.Connected(), "down once it stopped")
	require.Equal(t, 3, attempts)
	require.Equal(t, 2, strings.Count(logs.String(), "cannot connect; retrying"))
}

func TestReconnectStopsOnFatalAndSaysSoOnce(t *testing.T) {
	logs := &lockedBuffer{}
	b := testBase(logs)
	attempts := 0
	b.Reconnect(context.Background(), Backoff{Min: time.Millisecond}, func(context.Context) error {
		attempts++
		if attempts == 1 {
			return errors.New("network")
		}
		return Fatal(errors.New("bot banned"))
	})
	require.Equal(t, 2, attempts, "no attempt after the fatal answer")
	require.Equal(t, 1, strings.Count(logs.String(), "bot banned"))
	require.Contains(t, logs.String(), "level=ERROR")
}

func TestReconnectWaitsWhatThePlatformAsked(t *testing.T) {
	b := testBase(&lockedBuffer{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var at []time.Time
	b.Reconnect(ctx, Backoff{Min: time.Hour}, func(context.Context) error {
		at = append(at, time.Now())
		if len(at) == 3 {
			cancel()
		}
		return RetryIn(0, errors.New("reconnect requested (op 7)"))
	})
	require.Len(t, at, 3, "a requested reconnect does not wait the hour-long backoff")
}

// waits records Reconnect's waits instead of sleeping them.
func waits(t *testing.T) *[]time.Duration {
	var got []time.Duration
	saved := reconnectSleep
	reconnectSleep = func(ctx context.Context, d time.Duration) bool { got = append(got, d); return ctx.Err() == nil }
	t.Cleanup(func() { reconnectSleep = saved })
	return &got
}

func TestReconnectBacksOffAndResetsAfterAHealthyConnection(t *testing.T) {
	got := waits(t)
	b := testBase(&lockedBuffer{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	bo := Backoff{Min: time.Second, Max: 8 * time.Second, Healthy: 30 * time.Second}
	attempts := 0
	b.Reconnect(ctx, bo, func(context.Context) error {
		attempts++
		switch attempts {
		case 6:
			b.Up()
			b.upSince.Store(time.Now().Add(-time.Minute).UnixNano()) // it stayed up a minute
		case 7:
			b.Up() // up, but dropped at once: not healthy
		case 9:
			cancel()
		}
		return errors.New("dropped")
	})
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 8 * time.Second,
		time.Second, 2 * time.Second, 4 * time.Second}
	require.Len(t, *got, len(want))
	for i, d := range *got {
		require.LessOrEqual(t, d, want[i], "wait %d", i)
		require.GreaterOrEqual(t, d, want[i]/2, "wait %d", i)
	}
}
