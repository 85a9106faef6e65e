package integration

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/workers"
)

// eagerRows measures B1 with the publisher running the worker, as the
// gateway does: the turn started eagerly beside SignalWithStart, taken in
// turns in one process (before the gateway starts, so it alone polls).
func (b *benchEnv) eagerRows(ctx context.Context) (rows func(baselineP50 time.Duration) []benchRow) {
	t := b.t
	defer b.localWorkers()()
	eager := &channels.Bus{Client: b.dev.Client, Settings: b.set, LocalWorker: true}
	signalled := &channels.Bus{Client: b.dev.Client, Settings: b.set}
	turn := func(bus *channels.Bus, chatID string) time.Duration {
		msg := protocol.Inbound{ID: b.id("m"), SessionKey: "cli:" + chatID, Route: protocol.Route{Channel: "cli", ChatID: chatID}, Content: benchMessage(nil, false, 0), SentAt: time.Now()}
		start := time.Now()
		_, err := bus.Publish(ctx, msg)
		require.NoError(t, err)
		require.NoError(t, b.dev.Client.GetWorkflow(ctx, protocol.TurnWorkflowID("cli:"+chatID), "").Get(ctx, nil))
		return time.Since(start)
	}
	turn(eager, "b1e-warm")
	turn(signalled, "b1s-warm")
	var de, ds []time.Duration
	for i := 0; i < 60; i++ {
		de = append(de, turn(eager, fmt.Sprintf("b1e-%d", i%4)))
		ds = append(ds, turn(signalled, fmt.Sprintf("b1s-%d", i%4)))
	}
	pe, ps := percentile(de, .5), percentile(ds, .5)
	return func(baselineP50 time.Duration) []benchRow {
		return []benchRow{
			{"B1", "… publisher runs the worker, eager start: p50", ms(pe), ms(baselineP50), ratio(pe.Seconds(), baselineP50.Seconds()), "p50 ≤ 25 ms", yes(pe <= 25*time.Millisecond)},
			{"B1", "… same, not eager (SignalWithStart): p50", ms(ps), ms(baselineP50), ratio(ps.Seconds(), baselineP50.Seconds()), "", ""},
		}
	}
}

// localWorkers runs every worker of the bench home in this process, so a publisher here is
// also the turn's worker (eager start, eager dispatch); it returns what stops them.
func (b *benchEnv) localWorkers() (stop func()) {
	cfg, _, err := config.Load(b.home.ConfigPath)
	require.NoError(b.t, err)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	set, err := workers.Start(b.dev.Client, workers.Options{Config: cfg, Turns: true, Models: true, Workspace: true, Log: quiet, BuildID: "bench"})
	require.NoError(b.t, err)
	return set.Stop
}
