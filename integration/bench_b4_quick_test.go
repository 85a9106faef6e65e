package integration

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/internal/pgtest"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
)

// TestBenchB4Stores is B4 on the file store beside B4 on the PostgreSQL store (each on a SQLite
// Temporal of its own, as `make run` starts it), alternated NANOBOT_BENCH_ROUNDS times (default 1),
// with the store's per-turn PostgreSQL costs; where the cluster loads pg_stat_statements, the
// statements per turn too. The quick loop for work on the store:
// `NANOBOT_BENCH_TABLE=1 go test -run TestBenchB4Stores ./integration/` (make bench's env).
func TestBenchB4Stores(t *testing.T) {
	b, rounds, loadBefore := quickBench(t)
	if os.Getenv(pgtest.EnvVar) == "" {
		t.Fatal(pgtest.EnvVar + " is not set: B4 on the PostgreSQL store needs a cluster (make postgres)")
	}
	ctx := context.Background()
	pgSet := b.set
	pgSet.WorkspaceQueue = protocol.WorkspaceTaskQueue // as a deployment on PostgreSQL runs
	var rows []benchRow
	for r := range rounds {
		dev := testenv.StartRunDevServer(t)
		fw := b4Way{prefix: fmt.Sprintf("b4f%d-", r), dev: dev, set: b.set}
		profiled(t, &fw, "file")
		file := b.b4Through(t, ctx, fw)
		dev.Stop()

		storeURL := pgtest.Database(t)
		dev = testenv.StartRunDevServer(t)
		var before, after storeStatements
		var pgCPU float64
		w := b.pgWay(t, ctx, fmt.Sprintf("b4p%d-", r), dev, storeURL, pgSet)
		profiled(t, &w, "pg")
		startProfile, waitProfile := w.before, w.after
		w.before = func() { before = readStoreStatements(t, ctx, storeURL); pgCPU = clusterCPU(t, ctx); startProfile() }
		w.after = func() {
			waitProfile()
			pgCPU = clusterCPU(t, ctx) - pgCPU
			after = readStoreStatements(t, ctx, storeURL)
		}
		pg := b.b4Through(t, ctx, w)
		dev.Stop()
		per := after.minus(before).per(b4Turns)
		rows = append(rows,
			tpsRow("B4", fmt.Sprintf("round %d: PostgreSQL store + SQLite Temporal: turns/s, p95 %s (baseline column: file store + SQLite Temporal, p95 %s)", r+1, ms(pg.p95), ms(file.p95)),
				pg.tps, file.tps, "≥ 1.00×", pg.tps >= file.tps),
			benchRow{"C", "… CPU-ms per turn: gateway, temporal-dev (+ the PostgreSQL cluster's processes)",
				fmt.Sprintf("%.1f, %.1f (+ %.1f)", pg.gwCPU, pg.devCPU, pgCPU/b4Turns), fmt.Sprintf("%.1f, %.1f", file.gwCPU, file.devCPU), "-", "", ""},
			benchRow{"C", "… the store per turn", per.String(), "-", "-", "", ""})
		for _, s := range per.top(40) {
			rows = append(rows, benchRow{"C", fmt.Sprintf("… %.2f calls, %.2f rows per turn: `%s`", s.calls, s.rows, s.query), "-", "-", "-", "", ""})
		}
	}
	printBenchTable(loadBefore, nil, rows)
}

// TestBenchB4ServerCaches is B4's peak memory (gateway + temporal-dev, sampled together) and
// turns/s with temporal-dev as `make run` starts it, beside the same with the server's own cache
// sizes and no soft memory limit, alternated NANOBOT_BENCH_ROUNDS times (default 1), each on a
// temporal-dev of its own: the quick loop for work on the peak
// (`NANOBOT_BENCH_TABLE=1 go test -run TestBenchB4ServerCaches ./integration/`).
func TestBenchB4ServerCaches(t *testing.T) {
	b, rounds, loadBefore := quickBench(t)
	ctx := context.Background()
	levers := []serverLever{
		{what: "temporal-dev as `make run` starts it (history caches of 64 workflows and 64 KiB of events, a soft limit of 115 MiB)"},
		{what: "… the server's own cache sizes and no soft limit (`GOMEMLIMIT=off`)", env: []string{"GOMEMLIMIT=off"},
			args: nullDynamicConfig("history.hostLevelCacheMaxSize", "history.eventsCacheMaxSizeBytes")},
	}
	var rows []benchRow
	var base b4Result
	for i := range rounds * len(levers) {
		l := levers[i%len(levers)]
		restore := setEnv(t, l.env)
		dev := testenv.StartRunDevServer(t, l.args...)
		restore()
		r := b.b4Through(t, ctx, b4Way{prefix: fmt.Sprintf("b4c%d-", i), dev: dev, set: b.set})
		dev.Stop()
		if i%len(levers) == 0 {
			base = r
		}
		rows = append(rows,
			tpsRow("B4", l.what+": turns/s, p95 "+ms(r.p95)+" (baseline column: this round's first row)", r.tps, base.tps, "", false),
			benchRow{"M", "… at the B4 peak: sum (temporal-dev: " + r.peak.dev.String() + ")", r.peak.sum.String(), base.peak.sum.String(),
				ratio(float64(r.peak.sum.pss), float64(base.peak.sum.pss)), "PSS ≤ 200 MB", yes(r.peak.sum.pss <= 200*1024)})
	}
	printBenchTable(loadBefore, nil, rows)
}

// quickBench starts a focused bench loop (make bench's env, NANOBOT_BENCH_TABLE=1): its bench
// environment, its rounds (NANOBOT_BENCH_ROUNDS, default 1) and the load average before it.
func quickBench(t *testing.T) (*benchEnv, int, string) {
	if os.Getenv("NANOBOT_BENCH_TABLE") == "" {
		t.Skip("the benchmark table runs with make bench (NANOBOT_BENCH_TABLE=1)")
	}
	rounds, _ := strconv.Atoi(os.Getenv("NANOBOT_BENCH_ROUNDS"))
	loadBefore := loadAverage()
	return newBenchEnv(t), max(rounds, 1), loadBefore
}

// pgWay is a B4 way whose gateway keeps its state in the database at storeURL.
func (b *benchEnv) pgWay(t *testing.T, ctx context.Context, prefix string, dev *testenv.DevServer, storeURL string, set protocol.Settings) b4Way {
	db := openStore(t, ctx, storeURL)
	return b4Way{prefix: prefix, dev: dev, gwEnv: []string{"NANOBOT_DATABASE_URL=" + storeURL}, set: set,
		journal: storeJournal(t, ctx, db)}
}

// profiled makes w's gateway write a CPU profile of its first 20 s of B4 to
// NANOBOT_BENCH_PROFILE with name appended (nothing without it).
func profiled(t *testing.T, w *b4Way, name string) {
	out, addr := os.Getenv("NANOBOT_BENCH_PROFILE"), ""
	if out != "" {
		addr = fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
		w.gwEnv = append(w.gwEnv, "NANOBOT_PPROF="+addr)
		out += "." + name
	}
	var done <-chan struct{}
	w.before = func() { done = profileGateway(t, addr, out, 20*time.Second) }
	w.after = func() { <-done }
}

// clusterCPU is the CPU-ms the PostgreSQL cluster's postmaster and its live children have used
// (the cluster of the test URL; other users of a shared cluster count too).
func clusterCPU(t *testing.T, ctx context.Context) float64 {
	conn, err := pgx.Connect(ctx, os.Getenv(pgtest.EnvVar))
	require.NoError(t, err)
	defer conn.Close(ctx)
	var backend int
	require.NoError(t, conn.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&backend))
	postmaster := parentPid(backend)
	total := cpuMS(postmaster)
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		if pid, err := strconv.Atoi(p.Name()); err == nil && parentPid(pid) == postmaster {
			total += cpuMS(pid)
		}
	}
	return total
}

// parentPid is pid's parent (0 when it cannot be read).
func parentPid(pid int) int {
	f := procStat(pid)
	if len(f) < 2 {
		return 0
	}
	n, _ := strconv.Atoi(f[1])
	return n
}

// statement is one normalized statement's cumulative figures in one database.
type statement struct {
	query       string
	calls, rows float64
}

// storeStatements are a database's cumulative statistics: pg_stat_database's counters and, where
// the cluster has pg_stat_statements, each statement's.
type storeStatements struct {
	pgCounters
	statements map[string]statement
}

func (s storeStatements) minus(o storeStatements) storeStatements {
	out := storeStatements{pgCounters: s.pgCounters.minus(o.pgCounters), statements: map[string]statement{}}
	for q, st := range s.statements {
		st.calls -= o.statements[q].calls
		st.rows -= o.statements[q].rows
		if st.calls > 0 {
			out.statements[q] = st
		}
	}
	return out
}

func (s storeStatements) per(n float64) storeStatements {
	out := storeStatements{pgCounters: s.pgCounters.per(n), statements: map[string]statement{}}
	for q, st := range s.statements {
		out.statements[q] = statement{q, st.calls / n, st.rows / n}
	}
	return out
}

func (s storeStatements) String() string {
	calls := 0.0
	for _, st := range s.statements {
		if !isTxControl(st.query) {
			calls += st.calls
		}
	}
	if len(s.statements) == 0 {
		return s.pgCounters.String() + " (no pg_stat_statements: statements not counted)"
	}
	return fmt.Sprintf("%.1f statements, %s", calls, s.pgCounters)
}

// top is the n statements called most, BEGIN and COMMIT left out.
func (s storeStatements) top(n int) []statement {
	var out []statement
	for _, st := range s.statements {
		if !isTxControl(st.query) {
			out = append(out, st)
		}
	}
	for i := range out { // insertion sort: the statements are few
		for j := i; j > 0 && out[j].calls > out[j-1].calls; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out[:min(n, len(out))]
}

func isTxControl(q string) bool {
	switch strings.ToLower(strings.TrimSpace(q)) {
	case "begin", "commit", "rollback":
		return true
	}
	return false
}

// readStoreStatements reads the store database's statistics once PostgreSQL published them.
func readStoreStatements(t *testing.T, ctx context.Context, storeURL string) storeStatements {
	s := storeStatements{pgCounters: pgStats(t, ctx, []string{storeURL})[0], statements: map[string]statement{}}
	conn, err := pgx.Connect(ctx, os.Getenv(pgtest.EnvVar))
	require.NoError(t, err)
	defer conn.Close(ctx)
	var loaded bool
	require.NoError(t, conn.QueryRow(ctx, `SELECT current_setting('shared_preload_libraries') LIKE '%pg_stat_statements%'`).Scan(&loaded))
	if !loaded {
		return s
	}
	_, err = conn.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pg_stat_statements`)
	require.NoError(t, err)
	u, err := url.Parse(storeURL)
	require.NoError(t, err)
	rows, err := conn.Query(ctx, `SELECT regexp_replace(query, '\s+', ' ', 'g'), calls::float8, rows::float8 FROM pg_stat_statements
		WHERE dbid = (SELECT oid FROM pg_database WHERE datname = $1)`, strings.TrimPrefix(u.Path, "/"))
	require.NoError(t, err)
	for rows.Next() {
		var st statement
		require.NoError(t, rows.Scan(&st.query, &st.calls, &st.rows))
		prev := s.statements[st.query]
		s.statements[st.query] = statement{st.query, prev.calls + st.calls, prev.rows + st.rows}
	}
	require.NoError(t, rows.Err())
	return s
}
