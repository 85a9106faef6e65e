package channels

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/protocol"
)

func TestLoopStopsWithinItsBound(t *testing.T) {
	var never receiveLoop
	require.NoError(t, never.Stop(context.Background(), time.Second, "idle"), "a loop never started stops at once")

	var l receiveLoop
	run := l.Go(context.Background(), func(ctx context.Context) { <-ctx.Done() })
	require.NoError(t, l.Stop(context.Background(), time.Minute, "polling"))
	require.Error(t, run.Err(), "the loop's context ends with Stop")

	stuck := make(chan struct{})
	defer close(stuck)
	var hung receiveLoop
	hung.Go(context.Background(), func(context.Context) { <-stuck })
	require.EqualError(t, hung.Stop(context.Background(), 10*time.Millisecond, "polling"), "polling did not stop in time")
}

func TestLoopCallEndsWithTheLoopOrItsBound(t *testing.T) {
	var l receiveLoop
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

// TestServeHoldsTheConnectionUntilStop: Serve attaches publish and holds
// the platform's connection; Stop cancels it, waits for it and leaves the
// channel down; Stop before Serve returns at once, and a second
// Serve after a Stop (a channel started again) serves again.
func TestServeHoldsTheConnectionUntilStop(t *testing.T) {
	var b Base
	b.Init("test", nil, nil)
	require.NoError(t, b.Stop(context.Background()), "Stop before Start stops nothing")

	for cycle := range 2 {
		published := make(chan string, 1)
		publish := func(_ context.Context, msg protocol.Inbound, _ Admitted) error {
			published <- msg.Content
			return nil
		}
		held, ended := make(chan context.Context, 1), make(chan struct{})
		b.Serve(context.Background(), publish, "test stream", Backoff{}, func(ctx context.Context) error {
			b.Up()
			held <- ctx
			<-ctx.Done()
			close(ended)
			return ctx.Err()
		})
		var conn context.Context
		select {
		case conn = <-held:
		case <-time.After(5 * time.Second):
			t.Fatalf("cycle %d: Serve did not connect", cycle)
		}
		require.True(t, b.Connected(), "cycle %d", cycle)
		require.NoError(t, b.Publish(context.Background(), protocol.Inbound{Content: "hi"}, nil), "Serve attached publish")
		require.Equal(t, "hi", <-published)
		call, cancel := b.Call(time.Hour)
		defer cancel()

		require.NoError(t, b.Stop(context.Background()))
		require.Error(t, conn.Err(), "Stop cancels the connection")
		require.Error(t, call.Err(), "a call on the loop's behalf ends with it")
		select {
		case <-ended:
		default:
			t.Fatalf("cycle %d: Stop returned before the connection ended", cycle)
		}
		require.False(t, b.Connected(), "a stopped channel is down")
	}
}

// TestStopNamesTheLoopThatDidNotStop: a loop that outlives its bound is
// named in Stop's error, and the channel is down anyway.
func TestStopNamesTheLoopThatDidNotStop(t *testing.T) {
	stuck := make(chan struct{})
	defer close(stuck)
	var b Base
	b.Init("test", nil, nil)
	run := b.Receive(context.Background(), nil, "test polling", func(context.Context) {
		b.Up()
		<-stuck
	})
	require.Eventually(t, b.Connected, 5*time.Second, time.Millisecond)
	require.EqualError(t, b.StopLoop(context.Background(), 10*time.Millisecond), "test polling did not stop in time")
	require.Error(t, run.Err(), "the loop's context was cancelled")
	require.False(t, b.Connected())

	ended, cancel := context.WithCancel(context.Background())
	cancel()
	require.EqualError(t, b.Stop(ended), "test polling did not stop: context canceled", "Stop ends with its ctx")
}
