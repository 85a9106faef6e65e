package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
)

// b4Way is one configuration B4 runs in: a Temporal server, the gateway's extra environment
// (its store), the turn settings, and where each session's journal is read back.
type b4Way struct {
	prefix  string
	dev     *testenv.DevServer
	gwEnv   []string
	set     protocol.Settings
	journal func(key string) []chat.Message // nil: the home's files
	idle    bool                            // measure the pair idle before B4 (waits past temporal-dev's second release)
	// before and after, when set, run just before the 600 turns and just after them, gateway up.
	before, after func()
}

// b4Result is what one B4 run measured.
type b4Result struct {
	tps           float64
	p95           time.Duration
	idle, peak    pairMemory
	gwCPU, devCPU float64 // CPU-ms per turn under B4
	idleGwCPU     float64 // CPU-ms per second, idle
	idleDevCPU    float64
}

// idleCPUWindow is how long idle CPU is measured.
const idleCPUWindow = 5 * time.Second

// b4Through runs B4 through a gateway of its own on w.dev: 200 sessions × 3 turns at once,
// sampling the gateway's and temporal-dev's memory and CPU.
func (b *benchEnv) b4Through(t *testing.T, ctx context.Context, w b4Way) b4Result {
	saved := b.dev
	b.dev = w.dev
	defer func() { b.dev = saved }()
	gw, _, _ := startGateway(t, w.dev, home(b, append([]string{"NANOBOT_MAX_CONCURRENT_REQUESTS=64"}, w.gwEnv...)...))
	defer stopGateway(gw)
	gwPid, devPid := gw.Process.Pid, w.dev.Pid()
	var r b4Result
	if w.idle {
		time.Sleep(time.Until(w.dev.Ready.Add(idleAfter))) // idle means past temporal-dev's second release
		r.idle = settledPair(gwPid, devPid)
		g0, d0 := cpuMS(gwPid), cpuMS(devPid)
		time.Sleep(idleCPUWindow) // a measuring window, not a wait for an event
		r.idleGwCPU = (cpuMS(gwPid) - g0) / idleCPUWindow.Seconds()
		r.idleDevCPU = (cpuMS(devPid) - d0) / idleCPUWindow.Seconds()
	}
	_, _, err := b.durable(ctx, w.prefix+"warm", benchMessage(nil, false, 0), w.set)
	require.NoError(t, err)
	if w.before != nil {
		w.before()
	}
	peaks := samplePeaks(gwPid, devPid)
	g0, d0 := cpuMS(gwPid), cpuMS(devPid)
	var journal []func(string) []chat.Message
	if w.journal != nil {
		journal = append(journal, w.journal)
	}
	r.tps, r.p95 = b.concurrent(t, w.prefix, func(chatID, text string) (time.Duration, error) {
		d, _, err := b.durable(ctx, chatID, text, w.set)
		return d, err
	}, journal...)
	r.gwCPU, r.devCPU = (cpuMS(gwPid)-g0)/b4Turns, (cpuMS(devPid)-d0)/b4Turns
	r.peak = peaks.done()
	if w.after != nil {
		w.after()
	}
	return r
}

// b4Turns is B4's turn count (200 sessions × 3 turns).
const b4Turns = 600

func tpsRow(id, what string, d, base float64, target string, met bool) benchRow {
	m := ""
	if target != "" {
		m = yes(met)
	}
	return benchRow{id, what, fmt.Sprintf("%.1f", d), fmt.Sprintf("%.1f", base), ratio(d, base), target, m}
}
