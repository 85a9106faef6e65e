package integration

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
)

type benchRow struct{ id, what, durable, baseline, ratio, target, met string }

func ratio(d, b float64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f×", d/b)
}

func yes(ok bool) string {
	if ok {
		return "yes"
	}
	return "**no**"
}

// timeCommand runs the nanobot binary n times and returns the median wall
// time; "%d" in an argument becomes the run's number (a session per run).
func timeCommand(t *testing.T, n int, env []string, args ...string) time.Duration {
	var ds []time.Duration
	for i := 0; i < n; i++ {
		argv := make([]string, len(args))
		for k, a := range args {
			argv[k] = strings.ReplaceAll(a, "%d", fmt.Sprint(i))
		}
		start := time.Now()
		out, stderr, code := runNanobot(t, env, argv...)
		require.Equal(t, 0, code, "%v: %s %s", argv, out, stderr)
		ds = append(ds, time.Since(start))
	}
	return percentile(ds, 0.5)
}

// TestBenchTable is `make bench`: every benchmark of issue 11 in one run, on temporal-dev as
// `make run` starts it (a SQLite file database), durable beside its in-process baseline, the
// ratios to the floors first, printed as one Markdown table.
func TestBenchTable(t *testing.T) {
	if os.Getenv("NANOBOT_BENCH_TABLE") == "" {
		t.Skip("the benchmark table runs with make bench (NANOBOT_BENCH_TABLE=1)")
	}
	want := benchRowsWanted(os.Getenv("NANOBOT_BENCH_ROWS"))
	loadBefore := loadAverage()
	b := newBenchEnv(t)
	ctx := context.Background()
	var rows, headline []benchRow
	if want("S1") || want("S2") { // first: the gateway's start on a machine the other rows have not loaded
		rows = append(rows, b.startupRows(t)...)
	}
	env := b.home.Env(b.dev.Addr)

	// B5 without a gateway: the CLI runs the turn's workers itself.
	var cliAlone, start0, cliThin time.Duration
	if want("B5") {
		cliAlone = timeCommand(t, 5, env, "agent", "-m", "hi", "-s", "cli:b5a-%d")
		start0 = timeCommand(t, 5, env, "version")
	}
	// B1 eager beside not eager, in a process that publishes and runs the worker.
	eagerRows := func(time.Duration) []benchRow { return nil }
	var phaseRows []benchRow
	var eagerP50, floorP50 time.Duration
	if want("B1") {
		eagerRows = b.eagerRows(ctx)
		phaseRows, eagerP50, floorP50 = b.b1PhaseRows(ctx)
	}

	// The gateway is the durable side from here on.
	gw, _, _ := startGateway(t, b.dev, home(b, "NANOBOT_MAX_CONCURRENT_REQUESTS=64"))
	gwPid := gw.Process.Pid
	idleRSS := rssKB(gwPid)
	if want("B5") {
		cliThin = timeCommand(t, 5, env, "agent", "-m", "hi", "-s", "cli:b5b-%d")
	}

	// Warm both sides.
	_, _, err := b.durable(ctx, "warm", benchMessage(nil, false, 0), b.set)
	require.NoError(t, err)
	_, err = b.baseline("warmb", benchMessage(nil, false, 0), b.set)
	require.NoError(t, err)

	// B1: a one-iteration turn, 0 ms model (B5's baseline too).
	var b1d, b1b []time.Duration
	b1Turns := 0
	if want("B1") || want("B5") || want("C") {
		b1Turns = 60
	}
	b1Costs := startCosts(gwPid, b.dev.Pid())
	b.takeActivityTimes()
	for i := 0; i < b1Turns; i++ {
		d, run, err := b.durable(ctx, fmt.Sprintf("b1-%d", i%4), benchMessage(nil, false, 0), b.set)
		require.NoError(t, err)
		b1Costs.turn(run)
		b1d = append(b1d, d)
		d, err = b.baseline(fmt.Sprintf("b1b-%d", i%4), benchMessage(nil, false, 0), b.set)
		require.NoError(t, err)
		b1b = append(b1b, d)
	}
	b1Costs.finish(t, b.dev)
	p50d, p95d, p50b, p95b := percentile(b1d, .5), percentile(b1d, .95), percentile(b1b, .5), percentile(b1b, .95)
	rows = appendIf(want("B1"), rows,
		benchRow{"B1", "1-iteration turn, 0 ms model: p50", ms(p50d), ms(p50b), ratio(p50d.Seconds(), p50b.Seconds()), "p50 ≤ 25 ms", yes(p50d <= 25*time.Millisecond)},
		benchRow{"B1", "… p95", ms(p95d), ms(p95b), ratio(p95d.Seconds(), p95b.Seconds()), "", ""})
	if want("B1") {
		memP50 := b.b1InMemory(t, ctx)
		rows = append(rows, benchRow{"B1", "… p50 on in-memory Temporal (baseline column: on the file database)", ms(memP50), ms(p50d), ratio(memP50.Seconds(), p50d.Seconds()), "", ""})
		headline = append(headline,
			benchRow{"H1", "B1 / Temporal's floor: eager 1-iteration turn beside the same shape with empty activities, same server, same process, in alternation: p50",
				ms(eagerP50), ms(floorP50), ratio(eagerP50.Seconds(), floorP50.Seconds()), "≤ 1.25×", yes(eagerP50.Seconds() <= 1.25*floorP50.Seconds())},
			benchRow{"H2", "B1 / in-process: 1-iteration turn through the gateway beside the same activities in this process: p50",
				ms(p50d), ms(p50b), ratio(p50d.Seconds(), p50b.Seconds()), "", ""})
	}
	rows = append(rows, eagerRows(p50b)...)
	rows = append(rows, phaseRows...)
	rows = appendIf(want("B1"), rows, inProcessActivityRows(b.takeActivityTimes(), p50b, floorP50)...)

	// B2: 5 iterations, 10 tool calls, 100 ms model.
	var b2d, b2b time.Duration
	b2Costs := startCosts(gwPid, b.dev.Pid())
	for i := 0; i < 3 && (want("B2") || want("C")); i++ {
		msg := benchMessage([]int{2, 2, 3, 3}, false, 100)
		d, run, err := b.durable(ctx, fmt.Sprintf("b2-%d", i), msg, b.set)
		require.NoError(t, err)
		b2Costs.turn(run)
		b2d += d
		d, err = b.baseline(fmt.Sprintf("b2b-%d", i), msg, b.set)
		require.NoError(t, err)
		b2b += d
	}
	b2Costs.finish(t, b.dev)
	r2 := b2d.Seconds() / b2b.Seconds()
	rows = appendIf(want("B2"), rows, benchRow{"B2", "5 iterations, 10 tools, 100 ms model: mean wall time", ms(b2d / 3), ms(b2b / 3), ratio(b2d.Seconds(), b2b.Seconds()), "≤ 1.05×", yes(r2 <= 1.05)})
	headline = appendIf(want("B2"), headline, benchRow{"H3", "B2 overhead: 5 iterations, 10 tools, 100 ms model: ms per iteration over in-process, and the ratio",
		fmt.Sprintf("%.1f ms / iteration", (b2d-b2b).Seconds()*1000/3/5), ms(b2b / 3), ratio(b2d.Seconds(), b2b.Seconds()), "≤ 1.05×", yes(r2 <= 1.05)})

	if want("B3") {
		rows = append(rows, b.historyRows(ctx)...)
	}
	if want("B8") {
		rows = append(rows, b.sandboxRows(t, ctx)...)
	}
	stopGateway(gw)
	if !want("B4") && !want("B6") && !want("M") {
		rows = appendIf(want("B5"), rows, b5Rows(cliThin, cliAlone, start0+p50b)...)
		rows = appendIf(want("C"), rows, costRows(b1Costs, b2Costs, b4Result{}, nil)...)
		printBenchTable(loadBefore, headline, rows)
		return
	}

	// B4 (and B6, M and C under it): 200 sessions × 3 turns at once, 0 ms model, each way on a
	// temporal-dev of its own: the default first (file store, SQLite Temporal as `make run` starts it).
	def, noDrop := b.b4Default(t, ctx)
	tuned := b.b4GCTuned(t, ctx)
	tpsB, p95B4 := b.concurrent(t, "b4b-", func(chatID, text string) (time.Duration, error) { return b.baseline(chatID, text, b.set) })
	mem := b.b4Through(t, ctx, b4Way{prefix: "b4m-", dev: b.memDev(), set: b.set})
	rows = append(rows,
		tpsRow("B4", "200 sessions × 3 turns at once, 0 ms model, file store + SQLite Temporal (the default): turns/s", def.tps, tpsB, "≥ 30 turns/s", def.tps >= 30),
		benchRow{"B4", "… p95 turn latency (per-session order verified)", ms(def.p95), ms(p95B4), ratio(def.p95.Seconds(), p95B4.Seconds()), "", ""},
		tpsRow("B4", "… again, both binaries without madvise(DONTNEED) of their start-up pages (the M rows' baseline): turns/s, p95 "+ms(noDrop.p95)+" (baseline column: the default)", noDrop.tps, def.tps, "", false),
		tpsRow("B4", "… on in-memory Temporal: turns/s, p95 "+ms(mem.p95)+" (baseline column: the file database)", mem.tps, def.tps, "", false))
	headline = append(headline, tpsRow("H4", "B4 / in-process: turns/s, file store + SQLite Temporal", def.tps, tpsB, "", false))
	pgRows, prod := b.pgWays(t, ctx, def)
	rows = append(rows, pgRows...)

	rows = appendIf(want("B5"), rows, b5Rows(cliThin, cliAlone, start0+p50b)...)

	baseIdle, basePeak := rssBaseline(t, b.home)
	peak := def.peak.gateway.rss
	rows = append(rows,
		benchRow{"B6", "gateway RSS, idle", fmt.Sprintf("%.1f MB", float64(idleRSS)/1024), fmt.Sprintf("%.1f MB", float64(baseIdle)/1024), ratio(float64(idleRSS), float64(baseIdle)), "≤ 120 MB", yes(idleRSS <= 120*1024)},
		benchRow{"B6", "gateway RSS, peak under B4", fmt.Sprintf("%.1f MB", float64(peak)/1024), fmt.Sprintf("%.1f MB", float64(basePeak)/1024), ratio(float64(peak), float64(basePeak)), "≤ 120 MB", yes(peak <= 120*1024)})
	rows = append(rows, memoryRows(def, noDrop)...)
	rows = append(rows, benchRow{"M", fmt.Sprintf("… at the B4 peak: sum, temporal-dev's GC tuned (`TEMPORAL_DEV_TUNE_GC=1`; B4 %.1f turns/s) (baseline column: the default)", tuned.tps),
		tuned.peak.sum.String(), def.peak.sum.String(), ratio(float64(tuned.peak.sum.pss), float64(def.peak.sum.pss)), "PSS ≤ 200 MB", yes(tuned.peak.sum.pss <= 200*1024)})
	rows = append(rows, costRows(b1Costs, b2Costs, def, prod)...)
	if want("B7") {
		rows = append(rows, cacheRows(t)...)
	}
	printBenchTable(loadBefore, headline, rows)
}

// b4Default is B4 on the default configuration, then again with both binaries' madvise of their
// start-up pages off: each on a fresh temporal-dev as `make run` starts it, measured idle first.
func (b *benchEnv) b4Default(t *testing.T, ctx context.Context) (def, noDrop b4Result) {
	profileOut, pprofAddr := os.Getenv("NANOBOT_BENCH_PROFILE"), ""
	w := b4Way{prefix: "b4-", dev: testenv.StartRunDevServer(t), set: b.set, idle: true}
	if profileOut != "" {
		pprofAddr = fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
		w.gwEnv = append(w.gwEnv, "NANOBOT_PPROF="+pprofAddr)
	}
	var profiled <-chan struct{}
	w.before = func() { profiled = profileGateway(t, pprofAddr, profileOut, 20*time.Second) }
	w.after = func() { <-profiled }
	def = b.b4Through(t, ctx, w)
	w.dev.Stop()
	dev := testenv.StartRunDevServer(t, "--drop-startup-pages=false")
	noDrop = b.b4Through(t, ctx, b4Way{prefix: "b4n-", dev: dev, gwEnv: []string{"NANOBOT_DROP_STARTUP_PAGES=0"}, set: b.set, idle: true})
	dev.Stop()
	return def, noDrop
}

// b4GCTuned is B4 once more with temporal-dev's GC tuning on (GOGC 50, GOMEMLIMIT 64 MiB): the
// lever on the peak's anonymous memory, which is temporal-dev's heap.
func (b *benchEnv) b4GCTuned(t *testing.T, ctx context.Context) b4Result {
	restore := setEnv(t, gcTuned)
	dev := testenv.StartRunDevServer(t)
	restore()
	defer dev.Stop()
	return b.b4Through(t, ctx, b4Way{prefix: "b4g-", dev: dev, set: b.set})
}

// b1InMemory is B1's p50 through a gateway on in-memory Temporal.
func (b *benchEnv) b1InMemory(t *testing.T, ctx context.Context) time.Duration {
	mem, saved := b.memDev(), b.dev
	b.dev = mem // home() names b.dev's address
	defer func() { b.dev = saved }()
	gw, _, _ := startGateway(t, mem, home(b, "NANOBOT_MAX_CONCURRENT_REQUESTS=64"))
	defer stopGateway(gw)
	var ds []time.Duration
	for i := 0; i < 61; i++ {
		d, _, err := b.durable(ctx, fmt.Sprintf("b1m-%d", i%4), benchMessage(nil, false, 0), b.set)
		require.NoError(t, err)
		if i > 0 {
			ds = append(ds, d)
		}
	}
	return percentile(ds, .5)
}

// benchRowsWanted reads NANOBOT_BENCH_ROWS ("B2,B3"; empty: every row).
func benchRowsWanted(list string) func(id string) bool {
	ids := strings.FieldsFunc(strings.ToUpper(list), func(r rune) bool { return r == ',' || r == ' ' })
	return func(id string) bool { return len(ids) == 0 || slices.Contains(ids, id) }
}

func appendIf(ok bool, rows []benchRow, more ...benchRow) []benchRow {
	if !ok {
		return rows
	}
	return append(rows, more...)
}

func b5Rows(cliThin, cliAlone, base time.Duration) []benchRow {
	return []benchRow{
		{"B5", "`nanobot agent -m` wall time, gateway running (thin client)", ms(cliThin), ms(base), ratio(cliThin.Seconds(), base.Seconds()), "≤ 200 ms", yes(cliThin <= 200*time.Millisecond)},
		{"B5", "… gateway not running (the CLI runs the workers)", ms(cliAlone), ms(base), ratio(cliAlone.Seconds(), base.Seconds()), "≤ 1 s", yes(cliAlone <= time.Second)},
	}
}

// TestBenchServerTable is the temporal-dev rows alone (B4 in memory for reference, the server
// levers, S1–S3): `NANOBOT_BENCH_TABLE=1 go test -run TestBenchServerTable ./integration/`.
func TestBenchServerTable(t *testing.T) {
	if os.Getenv("NANOBOT_BENCH_TABLE") == "" {
		t.Skip("the benchmark table runs with make bench (NANOBOT_BENCH_TABLE=1)")
	}
	want := benchRowsWanted(os.Getenv("NANOBOT_BENCH_ROWS")) // "S1,S3": only those
	b := newBenchEnv(t)
	ctx := context.Background()
	var rows, rssLevers []benchRow
	if want("B4") {
		tps, p95, _ := b.b4On(t, ctx, b.memDev(), "b4m-")
		rows = append(rows, benchRow{"B4", "in memory, defaults kept: turns/s, p95 " + ms(p95), fmt.Sprintf("%.1f", tps), "-", "-", "≥ 30 turns/s", yes(tps >= 30)})
		var b4Levers []benchRow
		b4Levers, rssLevers = b.serverB4Rows(t, ctx, tps)
		rows = append(rows, b4Levers...)
	}
	if want("S1") || want("S2") {
		rows = append(rows, b.startupRows(t)...)
	}
	if want("S3") {
		rows = append(rows, b.footprintRows(t)...)
	}
	printBenchTable(loadAverage(), nil, append(rows, rssLevers...))
}

// printBenchTable prints the headline rows, then the rows, as make bench's Markdown table with its note.
func printBenchTable(loadBefore string, headline, rows []benchRow) {
	var out strings.Builder
	fmt.Fprintf(&out, "\n### make bench — commit %s, %s, %d CPUs, load average (1, 5, 15 min) %s before, %s after (%s)\n\n",
		benchCommit(), cpuModel(), runtime.NumCPU(), loadBefore, loadAverage(), time.Now().UTC().Format(time.DateOnly))
	out.WriteString("| # | measure | durable | in-process baseline | durable / baseline | target | met |\n|---|---|---|---|---|---|---|\n")
	for _, r := range append(headline, rows...) {
		fmt.Fprintf(&out, "| %s | %s | %s | %s | %s | %s | %s |\n", r.id, r.what, r.durable, r.baseline, r.ratio, r.target, r.met)
	}
	out.WriteString("\nBaselines call the same activity code and scripted model in this process, in the workflow's order, without Temporal. " +
		"B5's baseline is `nanobot version` (process start) plus B1's baseline p50; B6's is the RSS of a process of its own (this test binary re-run) " +
		"that builds the same activities from the same home and runs B4's baseline half without a Temporal worker; the scripted model stays in the test process for both. " +
		"B8 times exec in the default sandbox (bwrap, its own network, HTTP through the worker's proxy) beside tools.exec.sandbox \"none\" in the same run: each side's turns go through a gateway of its own on one file database, and the tool call alone runs in this process. " +
		"B7 runs `nanobot agent` against a wire-level Anthropic peer that bills prompt caching by Anthropic's documented rules, counting tokens with the tokens package. " +
		"temporal-dev runs as `make run` starts it (a SQLite file database, WAL, the Web UI on) except in the rows that say in-memory or Temporal on PostgreSQL; each B4 way runs on a temporal-dev of its own. " +
		"H rows are the headline: each figure beside its floor in the same run. M rows read /proc/<pid>/smaps_rollup (PSS counts a shared page once across its users; anon is memory no file backs), idle 12 s after temporal-dev's start and at B4's peak. " +
		"C rows are the per-turn costs docs/capacity.md takes as inputs (CPU from /proc/<pid>/stat; PostgreSQL's from pg_stat_database and pg_database_size). " +
		"A lever row switches one setting away from the default kept; RSS is sampled until it moves less than 1 % in a second.\n")
	fmt.Print(out.String())
}

// loadAverage is /proc/loadavg's three load averages.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(data)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}

// benchCommit is NANOBOT_BENCH_COMMIT (make bench passes its version) or git's description of the tree.
func benchCommit() string {
	if c := os.Getenv("NANOBOT_BENCH_COMMIT"); c != "" {
		return c
	}
	out, err := exec.Command("git", "describe", "--always", "--dirty").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}

// home is the bench's environment with extra variables.
func home(b *benchEnv, extra ...string) []string { return b.home.Env(b.dev.Addr, extra...) }

func cpuModel() string {
	data, _ := os.ReadFile("/proc/cpuinfo")
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "model name") {
			_, v, _ := strings.Cut(line, ":")
			return strings.TrimSpace(v)
		}
	}
	out, _ := exec.Command("uname", "-m").Output()
	return strings.TrimSpace(string(out))
}

// concurrent runs 200 sessions × 3 turns, the sessions at once, and checks
// each session's journal (the home's files, or journal when given) holds
// its three messages in order.
func (b *benchEnv) concurrent(t *testing.T, prefix string, turn func(chatID, text string) (time.Duration, error), journal ...func(key string) []chat.Message) (float64, time.Duration) {
	const sessions, turns = 200, 3
	var mu sync.Mutex
	var lat []time.Duration
	var wg sync.WaitGroup
	errs := make(chan error, sessions)
	start := time.Now()
	for s := 0; s < sessions; s++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 1; k <= turns; k++ {
				d, err := turn(fmt.Sprintf("%s%d", prefix, s), fmt.Sprintf("turn k=%d", k))
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				lat = append(lat, d)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	for s := 0; s < sessions; s++ {
		key := protocol.SessionKey("cli", fmt.Sprintf("%s%d", prefix, s))
		var msgs []chat.Message
		if len(journal) > 0 {
			msgs = journal[0](key)
		} else {
			_, msgs = sessionLines(t, b.home, key)
		}
		var got []string
		for _, m := range msgs {
			if m.Role == chat.RoleUser {
				got = append(got, strings.Fields(m.Content)[1])
			}
		}
		require.Equal(t, []string{"k=1", "k=2", "k=3"}, got, "session %s%d in order", prefix, s)
	}
	return float64(sessions*turns) / wall.Seconds(), percentile(lat, .95)
}

// historyRows is B3: history bytes per iteration at 10 and 100 iterations
// over a 40 KB context, beside the transcript-passing shape, and a
// 1000-iteration turn that continues as new with every run under 512 KB.
func (b *benchEnv) historyRows(ctx context.Context) []benchRow {
	t := b.t
	defer b.startTranscriptWorker()()
	var rows []benchRow
	per := map[int]float64{}
	settings := b.set
	settings.MaxRepeatedToolCalls = 1 << 20 // the rounds repeat one call on purpose
	settings.MaxIterations = 1000
	for _, n := range []int{10, 100} {
		rounds := make([]int, n-1)
		for i := range rounds {
			rounds[i] = 1
		}
		msg := benchMessage(rounds, true, 0)
		_, run, err := b.durable(ctx, fmt.Sprintf("b3-%d", n), msg, settings)
		require.NoError(t, err)
		require.Equal(t, n, countModelCalls(t, b.dev, run.GetID(), run.GetRunID()), "the B3 turn ran all its iterations in one run")
		ours := float64(historyBytes(t, b.dev.Client, run.GetID(), run.GetRunID())) / float64(n)
		per[n] = ours
		trun, err := b.dev.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: b.id("transcript-"), TaskQueue: transcriptQueue},
			"TranscriptTurn", transcriptIn{Messages: []chat.Message{{Role: chat.RoleUser, Content: msg}}, MaxIterations: n + 5})
		require.NoError(t, err)
		var iters int
		require.NoError(t, trun.Get(ctx, &iters))
		require.Equal(t, n, iters)
		theirs := float64(historyBytes(t, b.dev.Client, trun.GetID(), trun.GetRunID())) / float64(n)
		target, met := "≤ 2.5 KiB", ours <= 2560
		if n == 100 {
			target, met = "≤ 2.5 KiB, flat, ≥ 10× smaller", ours <= 2560 && theirs/ours >= 10 && ours <= per[10]*1.25
		}
		rows = append(rows, benchRow{"B3", fmt.Sprintf("history bytes per iteration, %d iterations over 40 KB (baseline column: transcript passed through every model activity)", n),
			fmt.Sprintf("%.2f KiB", ours/1024), fmt.Sprintf("%.1f KiB", theirs/1024), ratio(ours, theirs), target, yes(met)})
	}

	rounds := make([]int, 999)
	for i := range rounds {
		rounds[i] = 1
	}
	msg := benchMessage(rounds, false, 0)
	d, run, err := b.durable(ctx, "b3-1000", msg, settings)
	require.NoError(t, err)
	resp, err := b.dev.Client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: fmt.Sprintf("WorkflowId = '%s'", run.GetID()), PageSize: 1000})
	require.NoError(t, err)
	runs, biggest := 0, 0
	for _, e := range resp.GetExecutions() {
		runs++
		biggest = max(biggest, historyBytes(t, b.dev.Client, e.GetExecution().GetWorkflowId(), e.GetExecution().GetRunId()))
	}
	base, err := b.baseline("b3-1000b", msg, settings)
	require.NoError(t, err)
	rows = append(rows, benchRow{"B3", fmt.Sprintf("1000-iteration turn: %d runs via continue-as-new, largest run history %.0f KiB; wall time", runs, float64(biggest)/1024),
		ms(d), ms(base), ratio(d.Seconds(), base.Seconds()), "every run < 512 KiB", yes(biggest < 512<<10 && runs > 1)})
	return rows
}

// profileGateway writes a CPU profile of the gateway's first d under B4 to
// out (NANOBOT_BENCH_PROFILE), for `go tool pprof bin/nanobot out`.
func profileGateway(t *testing.T, addr, out string, d time.Duration) <-chan struct{} {
	done := make(chan struct{})
	if addr == "" {
		close(done)
		return done
	}
	go func() {
		defer close(done)
		resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, int(d.Seconds())))
		if err != nil {
			t.Logf("gateway profile: %v", err)
			return
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		if err == nil {
			err = os.WriteFile(out, data, 0o644)
		}
		if err != nil {
			t.Logf("gateway profile: %v", err)
		}
	}()
	return done
}

// countModelCalls counts the LLMCall activities a run completed.
func countModelCalls(t *testing.T, dev *testenv.DevServer, workflowID, runID string) int {
	n := 0
	scheduled := map[int64]bool{}
	for _, ev := range testenv.History(t, dev.Client, workflowID, runID).Events {
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == protocol.ActivityLLMCall {
			scheduled[ev.GetEventId()] = true
		}
		if a := ev.GetActivityTaskCompletedEventAttributes(); a != nil && scheduled[a.GetScheduledEventId()] {
			n++
		}
	}
	return n
}

// inProcessActivityRows say where B1's in-process turn goes, activity by activity (p50 of each),
// and what that work alone sets as H1's least ratio: the floor plus this work, over the floor.
func inProcessActivityRows(times map[string][]time.Duration, p50b, floor time.Duration) []benchRow {
	var rows []benchRow
	var sum time.Duration
	for _, name := range baselineActivities {
		p := percentile(times[name], .5)
		sum += p
		rows = append(rows, benchRow{"B1·", "in-process B1 turn, " + name + " activity: p50", ms(p), "-", "-", "", ""})
	}
	if floor > 0 {
		rows = append(rows, benchRow{"B1·", fmt.Sprintf("… the activities' own work (sum of their p50s; the turn's p50 %s): H1's least ratio, (floor + work) / floor", ms(p50b)),
			ms(sum), ms(floor), ratio((floor + sum).Seconds(), floor.Seconds()), "", ""})
	}
	return rows
}
