package channels

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestLoopStopsWithinItsBound(t *testing.T) {
	var never Loop
	require.NoError(t, never.Stop(context.Background(), time.Second, "idle"), "a loop never started stops at once")

	var l Loop
	run := l.Go(context.Background(), func(ctx context.Context) { <-ctx.Done() })
	require.NoError(t, l.Stop(context.Background(), time.Minute, "polling"))
	require.Error(t, run.Err(), "the loop's context ends with Stop")

	stuck := make(chan struct{})
	defer close(stuck)
	var hung Loop
	hung.Go(context.Background(), func(context.Context) { <-stuck })
	require.EqualError(t, hung.Stop(context.Background(), 10*time.Millisecond, "polling"), "polling did not stop in time")
}
