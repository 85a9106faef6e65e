package integration

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/internal/pgtest"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/pgstore"
	"github.com/nanobot-durable/nanobot/protocol"
)

// postgresB4 is B4 again with the gateway on the PostgreSQL store, beside
// B4 on the JSONL files (tps, p95: the rows above) in the baseline column.
func (b *benchEnv) postgresB4(t *testing.T, ctx context.Context, tps float64, p95 time.Duration) []benchRow {
	what := "200 sessions × 3 turns at once on the PostgreSQL store: turns/s (baseline column: B4 on the JSONL files)"
	if os.Getenv(pgtest.EnvVar) == "" {
		fmt.Println("WARNING: " + pgtest.EnvVar + " is not set: B4 on PostgreSQL is SKIPPED (make bench starts a cluster)")
		return []benchRow{{"B4", what, "not run (no database)", fmt.Sprintf("%.1f", tps), "-", "≥ 30 turns/s", "-"}}
	}
	url := pgtest.Database(t)
	db, err := pgstore.Open(ctx, url, nil)
	require.NoError(t, err)
	defer db.Close()
	gw, _, _ := startGateway(t, b.dev, home(b, "NANOBOT_MAX_CONCURRENT_REQUESTS=64", "NANOBOT_DATABASE_URL="+url))
	defer stopGateway(gw)
	// As a deployment on PostgreSQL runs: BUILD and the tools on the workspace host's queue.
	set := b.set
	set.WorkspaceQueue = protocol.WorkspaceTaskQueue
	_, _, err = b.durable(ctx, "warm-pg", benchMessage(nil, false, 0), set)
	require.NoError(t, err)
	journal := func(key string) []chat.Message {
		sess, err := db.Sessions().Load(ctx, key)
		require.NoError(t, err)
		return sess.Messages
	}
	run := func(prefix string) (float64, time.Duration) {
		return b.concurrent(t, prefix, func(chatID, text string) (time.Duration, error) {
			d, _, err := b.durable(ctx, chatID, text, set)
			return d, err
		}, journal)
	}
	tpsPG, p95PG := run("b4pg-")
	// Then a second worker process of its own HOME (stateless: no workspace) beside the gateway.
	other := testenv.NewHome(t, b.model.URL(), nil)
	worker, _ := startWorker(t, other.Env(b.dev.Addr, "NANOBOT_MAX_CONCURRENT_REQUESTS=64", "NANOBOT_DATABASE_URL="+url))
	tps2, p952 := run("b4pg2-")
	_ = worker.Process.Kill()
	_, _ = worker.Process.Wait()
	return []benchRow{
		{"B4", what, fmt.Sprintf("%.1f", tpsPG), fmt.Sprintf("%.1f", tps), ratio(tpsPG, tps), "≥ 30 turns/s", yes(tpsPG >= 30)},
		{"B4", "… p95 turn latency on PostgreSQL (per-session order verified in the database)", ms(p95PG), ms(p95), ratio(p95PG.Seconds(), p95.Seconds()), "", ""},
		{"B4", "… on PostgreSQL with two worker processes (gateway + a stateless worker of another HOME): turns/s (baseline column: one process)", fmt.Sprintf("%.1f", tps2), fmt.Sprintf("%.1f", tpsPG), ratio(tps2, tpsPG), "", ""},
		{"B4", "… p95 with two worker processes (baseline column: one)", ms(p952), ms(p95PG), ratio(p952.Seconds(), p95PG.Seconds()), "", ""},
	}
}

// stopGateway stops a gateway with SIGTERM and waits for it (once: a
// stopped one is left alone).
func stopGateway(gw *exec.Cmd) {
	if gw.Process.Signal(syscall.SIGTERM) == nil {
		_, _ = gw.Process.Wait()
	}
}
