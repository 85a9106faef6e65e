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

func TestLoopCallEndsWithTheLoopOrItsBound(t *testing.T) {
	var l Loop
	early, cancel := l.Call(time.Hour)
	defer cancel()
	require.NoError(t, early.Err(), "a call before Go is bounded by its time alone")

	l.Go(context.Background(), func(ctx context.Context) { <-ctx.Done() })
	call, cancel := l.Call(time.Hour)
	defer cancel()
	short, cancelShort := l.Call(time.Nanosecond)
	defer cancelShort()
	require.Eventually(t, func() bool { return short.Err() != nil }, 5*time.Second, time.Millisecond, "a call ends after its bound")
	require.NoError(t, call.Err())
	require.NoError(t, l.Stop(context.Background(), time.Minute, "polling"))
	require.ErrorIs(t, call.Err(), context.Canceled, "a call ends with the loop")
}
