package integration

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/internal/pgtest"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/pgstore"
	"github.com/nanobot-durable/nanobot/protocol"
)

// pgCounters are PostgreSQL's cumulative statistics of some databases, summed.
type pgCounters struct{ commits, rows, bytes float64 }

func (c pgCounters) minus(o pgCounters) pgCounters {
	return pgCounters{c.commits - o.commits, c.rows - o.rows, c.bytes - o.bytes}
}

func (c pgCounters) per(n float64) pgCounters {
	return pgCounters{c.commits / n, c.rows / n, c.bytes / n}
}

func (c pgCounters) String() string {
	return fmt.Sprintf("%.1f transactions, %.1f rows written, %.1f KiB grown", c.commits, c.rows, c.bytes/1024)
}

// pgStatsSettle is how long PostgreSQL 15 may hold an idle backend's statistics before it
// publishes them (PGSTAT_IDLE_INTERVAL, 10 s).
const pgStatsSettle = 11 * time.Second

// pgStats reads, for each group of database URLs, the committed transactions, the rows inserted,
// updated and deleted and the databases' size, once their backends' statistics are published.
func pgStats(t *testing.T, ctx context.Context, groups ...[]string) []pgCounters {
	time.Sleep(pgStatsSettle) // PostgreSQL publishes statistics on its own clock, not on an event we can wait for
	conn, err := pgx.Connect(ctx, os.Getenv(pgtest.EnvVar))
	require.NoError(t, err)
	defer conn.Close(ctx)
	var out []pgCounters
	for _, urls := range groups {
		var names []string
		for _, raw := range urls {
			u, err := url.Parse(raw)
			require.NoError(t, err)
			names = append(names, strings.TrimPrefix(u.Path, "/"))
		}
		var c pgCounters
		require.NoError(t, conn.QueryRow(ctx, `SELECT sum(xact_commit)::float8, sum(tup_inserted + tup_updated + tup_deleted)::float8,
			sum(pg_database_size(datname))::float8 FROM pg_stat_database WHERE datname = ANY($1)`, names).Scan(&c.commits, &c.rows, &c.bytes))
		out = append(out, c)
	}
	return out
}

// withDatabase is url with another database name.
func withDatabase(t *testing.T, raw, name string) string {
	u, err := url.Parse(raw)
	require.NoError(t, err)
	u.Path = "/" + name
	return u.String()
}

// pgWays is B4 with the gateway on the PostgreSQL store: on SQLite Temporal (a file database of
// its own, as `make run` gives users) and on Temporal on PostgreSQL (the production section),
// beside B4 on the JSONL files (base). It also returns the production way's per-turn costs.
func (b *benchEnv) pgWays(t *testing.T, ctx context.Context, base b4Result) ([]benchRow, *prodCosts) {
	what := "B4 on the PostgreSQL store + SQLite Temporal: turns/s, p95 %s (baseline column: file store + SQLite Temporal)"
	if os.Getenv(pgtest.EnvVar) == "" {
		fmt.Println("WARNING: " + pgtest.EnvVar + " is not set: B4 on PostgreSQL is SKIPPED (make bench starts a cluster)")
		return []benchRow{{"B4", fmt.Sprintf(what, "-"), "not run (no database)", fmt.Sprintf("%.1f", base.tps), "-", "≥ 30 turns/s", "-"}}, nil
	}
	// As a deployment on PostgreSQL runs: BUILD and the tools on the workspace host's queue.
	set := b.set
	set.WorkspaceQueue = protocol.WorkspaceTaskQueue
	way := func(prefix string, dev *testenv.DevServer, storeURL string) b4Way {
		return b.pgWay(t, ctx, prefix, dev, storeURL, set)
	}

	sqliteDev := testenv.StartRunDevServer(t)
	onSQLite := b.b4Through(t, ctx, way("b4pg-", sqliteDev, pgtest.Database(t)))
	sqliteDev.Stop()

	temporalURL := temporalOnPostgres(t)
	prodDev := testenv.StartDevServer(t, "--db", temporalURL)
	storeURL := pgtest.Database(t)
	u, err := url.Parse(temporalURL)
	require.NoError(t, err)
	temporalDBs := []string{temporalURL, withDatabase(t, temporalURL, strings.TrimPrefix(u.Path, "/")+"_visibility")}
	var costs prodCosts
	var before []pgCounters
	w := way("b4pp-", prodDev, storeURL)
	w.before = func() { before = pgStats(t, ctx, []string{storeURL}, temporalDBs) }
	w.after = func() {
		after := pgStats(t, ctx, []string{storeURL}, temporalDBs)
		costs.store, costs.temporal = after[0].minus(before[0]).per(b4Turns), after[1].minus(before[1]).per(b4Turns)
	}
	prod := b.b4Through(t, ctx, w)
	costs.gwCPU, costs.devCPU = prod.gwCPU, prod.devCPU

	// Then a second worker process of its own HOME (stateless: no workspace) beside the gateway.
	other := testenv.NewHome(t, b.model.URL(), nil)
	worker, _ := startWorker(t, other.Env(prodDev.Addr, "NANOBOT_MAX_CONCURRENT_REQUESTS=64", "NANOBOT_DATABASE_URL="+storeURL))
	w2 := way("b4pp2-", prodDev, storeURL)
	two := b.b4Through(t, ctx, w2)
	_ = worker.Process.Kill()
	_, _ = worker.Process.Wait()
	prodDev.Stop()

	return []benchRow{
		tpsRow("B4", fmt.Sprintf(what, ms(onSQLite.p95)), onSQLite.tps, base.tps, "≥ 30 turns/s", onSQLite.tps >= 30),
		tpsRow("B4", "B4 on the PostgreSQL store + Temporal on PostgreSQL (production): turns/s, p95 "+ms(prod.p95)+" (baseline column: file store + SQLite Temporal)",
			prod.tps, base.tps, "≥ 30 turns/s", prod.tps >= 30),
		tpsRow("B4", "… production, two worker processes (gateway + a stateless worker of another HOME): turns/s, p95 "+ms(two.p95)+" (baseline column: one process)",
			two.tps, prod.tps, "", false),
	}, &costs
}

// openStore opens the store database at storeURL for the test's reads, closed when it ends.
func openStore(t *testing.T, ctx context.Context, storeURL string) *pgstore.DB {
	db, err := pgstore.Open(ctx, storeURL, nil)
	require.NoError(t, err)
	t.Cleanup(db.Close)
	return db
}

// storeJournal reads a session's messages back from the store database.
func storeJournal(t *testing.T, ctx context.Context, db *pgstore.DB) func(key string) []chat.Message {
	return func(key string) []chat.Message {
		sess, err := db.Sessions().Load(ctx, key)
		require.NoError(t, err)
		return sess.Messages
	}
}

// stopGateway stops a gateway with SIGTERM and waits for it (once: a
// stopped one is left alone).
func stopGateway(gw *exec.Cmd) {
	if gw.Process.Signal(syscall.SIGTERM) == nil {
		_, _ = gw.Process.Wait()
	}
}
