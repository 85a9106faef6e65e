package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/internal/testenv"
)

// serverLever is one temporal-dev setting switched away from the default we keep.
type serverLever struct {
	what string
	args []string // temporal-dev flags
	env  []string // temporal-dev environment (GOGC, GOMEMLIMIT)
}

// nullDynamicConfig restores the server's own defaults for keys temporal-dev sets.
func nullDynamicConfig(keys ...string) []string {
	var args []string
	for _, k := range keys {
		args = append(args, "--dynamic-config-value", k+"=null")
	}
	return args
}

// taskWorkersOff are the server's 4 task-queue partitions and 512-worker task schedulers.
var taskWorkersOff = nullDynamicConfig("matching.numTaskqueueReadPartitions", "matching.numTaskqueueWritePartitions",
	"history.transferProcessorSchedulerWorkerCount", "history.timerProcessorSchedulerWorkerCount", "history.visibilityProcessorSchedulerWorkerCount")

// gcTuned switches temporal-dev's tight GC tuning on (GOGC 50, GOMEMLIMIT 64 MiB); off by default: it halved B4's turns/s.
var gcTuned = []string{"TEMPORAL_DEV_TUNE_GC=1"}

// startLeverServer starts temporal-dev on a file database of its own (as `make run` does) with
// the lever applied ("$DIR" in its args is that database's directory); env reaches only this process.
func startLeverServer(t *testing.T, l serverLever, extra ...string) *testenv.DevServer {
	t.Helper()
	dir := t.TempDir()
	args := []string{"--db-filename", filepath.Join(dir, "temporal.db")}
	for _, a := range l.args {
		args = append(args, strings.ReplaceAll(a, "$DIR", dir))
	}
	restore := setEnv(t, l.env)
	defer restore()
	return testenv.StartDevServer(t, append(args, extra...)...)
}

// setEnv sets NAME=VALUE pairs in this process and returns what puts the old values back.
func setEnv(t *testing.T, kvs []string) func() {
	var undo []func()
	for _, kv := range kvs {
		k, v, _ := strings.Cut(kv, "=")
		old, had := os.LookupEnv(k)
		require.NoError(t, os.Setenv(k, v))
		undo = append(undo, func() {
			if had {
				_ = os.Setenv(k, old)
			} else {
				_ = os.Unsetenv(k)
			}
		})
	}
	return func() {
		for _, u := range undo {
			u()
		}
	}
}

// b4On is B4 through a gateway against dev; it returns turns/s, p95 and dev's settled RSS after.
func (b *benchEnv) b4On(t *testing.T, ctx context.Context, dev *testenv.DevServer, prefix string) (float64, time.Duration, int) {
	saved := b.dev
	b.dev = dev
	defer func() { b.dev = saved }()
	gw, _, _ := startGateway(t, dev, home(b, "NANOBOT_MAX_CONCURRENT_REQUESTS=64"))
	defer stopGateway(gw)
	_, _, err := b.durable(ctx, prefix+"warm", benchMessage(nil, false, 0), b.set)
	require.NoError(t, err)
	tps, p95 := b.concurrent(t, prefix, func(chatID, text string) (time.Duration, error) {
		d, _, err := b.durable(ctx, chatID, text, b.set)
		return d, err
	})
	return tps, p95, settledRSS(dev.Pid())
}

// serverB4Rows is B4 on the file database users get, then with each write-path lever switched,
// beside B4 in memory (tpsMem); it also returns the rows of the server's RSS after each run.
func (b *benchEnv) serverB4Rows(t *testing.T, ctx context.Context, tpsMem float64) (b4, rss []benchRow) {
	levers := []serverLever{
		{what: "file database (WAL, as `make run` gives users), defaults kept"},
		{what: "… 4 SQLite connections (`--sqlite-max-conns 4`)", args: []string{"--sqlite-max-conns", "4"}},
		{what: "… every visibility index (`--sqlite-lean-visibility=false`)", args: []string{"--sqlite-lean-visibility=false"}},
		{what: "… visibility in a file of its own (`--sqlite-visibility-file`)", args: []string{"--sqlite-visibility-file", "$DIR/visibility.db"}},
		{what: "… visibility in a file of its own and 4 connections each", args: []string{"--sqlite-visibility-file", "$DIR/visibility.db", "--sqlite-max-conns", "4"}},
		{what: "… the server's task workers (512 per scheduler) and 4 task-queue partitions", args: taskWorkersOff},
		{what: "… GC tuned (`TEMPORAL_DEV_TUNE_GC=1`: GOGC 50, GOMEMLIMIT 64 MiB)", env: gcTuned},
		{what: "… the server's own history cache sizes (128 000 workflows, 512 KiB of events)", args: nullDynamicConfig("history.hostLevelCacheMaxSize", "history.eventsCacheMaxSizeBytes")},
	}
	var baseRSS int
	for i, l := range levers {
		dev := startLeverServer(t, l)
		tps, p95, after := b.b4On(t, ctx, dev, fmt.Sprintf("b4s%d-", i))
		dev.Stop()
		if i == 0 {
			baseRSS = after
		}
		b4 = append(b4, benchRow{"B4", l.what + ": turns/s, p95 " + ms(p95) + " (baseline column: B4 in memory)",
			fmt.Sprintf("%.1f", tps), fmt.Sprintf("%.1f", tpsMem), ratio(tps, tpsMem), "≥ 30 turns/s", yes(tps >= 30)})
		rss = append(rss, benchRow{"S3", "temporal-dev RSS after that B4, settled: " + l.what + " (baseline column: defaults kept)",
			mb(after), mb(baseRSS), ratio(float64(after), float64(baseRSS)), "", ""})
	}
	return b4, rss
}

// idleAfter is how long after its start a gateway counts as idle for S2.
const idleAfter = 12 * time.Second

// startupRows are S1 (gateway start to ready, embedded temporal-dev, existing database, median
// of 5 after a first start made the database) and S2 (idle RSS of the gateway and of the pair).
func (b *benchEnv) startupRows(t *testing.T) []benchRow {
	h := testenv.NewHome(t, b.model.URL(), nil)
	env, _ := embeddedEnv(t, h)
	var ready []time.Duration
	var gwRSS, devRSS, gwAnon, devAnon int
	const starts = 6
	for i := 0; i < starts; i++ {
		start := time.Now()
		gw, out, errOut := startNanobot(t, env, "gateway")
		require.Eventually(t, func() bool { return strings.Contains(out.String(), "Press Ctrl-C to stop.") }, time.Minute, 2*time.Millisecond,
			"gateway did not start:\n%s\n%s", out, errOut)
		if i > 0 {
			ready = append(ready, time.Since(start))
		}
		if i == starts-1 {
			time.Sleep(time.Until(start.Add(idleAfter))) // idle means past temporal-dev's second release, 10 s after its ready line
			child := childPid(t, gw.Process.Pid)
			devRSS = settledRSS(child)
			gwRSS = settledRSS(gw.Process.Pid)
			devAnon, gwAnon = anonKB(child), anonKB(gw.Process.Pid)
		}
		stopGateway(gw)
	}
	s1 := percentile(ready, .5)
	pair := gwRSS + devRSS
	return []benchRow{
		{"S1", "`nanobot gateway` start to ready (banner), embedded temporal-dev, existing database: median of 5", ms(s1), "-", "-", "≤ 0.5 s", yes(s1 <= 500*time.Millisecond)},
		{"S2", "gateway RSS, idle 12 s after start (embedded temporal-dev; anonymous memory " + mb(gwAnon) + ", the rest pages of its binary)", mb(gwRSS), "-", "-", "≤ 40 MB", yes(gwRSS <= 40*1024)},
		{"S2", "gateway + temporal-dev RSS, idle (temporal-dev alone: " + mb(devRSS) + ", of which anonymous " + mb(devAnon) + ")", mb(pair), "-", "-", "≤ 150 MB", yes(pair <= 150*1024)},
	}
}

// footprintRows are S3: temporal-dev's idle RSS as the gateway starts it (file database, Web
// UI, nanobot's search attributes) with each footprint lever switched.
func (b *benchEnv) footprintRows(t *testing.T) []benchRow {
	levers := []serverLever{
		{what: "defaults kept"},
		{what: "no Web UI (`--headless`)", args: []string{"--headless"}},
		{what: "start-up memory not released (`--release-startup-memory=false`)", args: []string{"--release-startup-memory=false"}},
		{what: "GC tuned (`TEMPORAL_DEV_TUNE_GC=1`: GOGC 50, GOMEMLIMIT 64 MiB)", env: gcTuned},
		{what: "`GOGC=50` alone", env: []string{"GOGC=50"}},
		{what: "`GOMEMLIMIT=64MiB` alone", env: []string{"GOMEMLIMIT=64MiB"}},
		{what: "GC tuned and start-up memory not released", args: []string{"--release-startup-memory=false"}, env: gcTuned},
		{what: "the server's task workers and partitions", args: taskWorkersOff},
	}
	var rows []benchRow
	var base int
	for i, l := range levers {
		ui := []string{"--headless=false", "--ui-port", strconv.Itoa(testenv.FreePort(t))}
		if l.args != nil && l.args[0] == "--headless" {
			ui = nil
		}
		dev := startLeverServer(t, l, ui...)
		rss := settledRSS(dev.Pid())
		dev.Stop()
		if i == 0 {
			base = rss
		}
		rows = append(rows, benchRow{"S3", "temporal-dev idle RSS: " + l.what + " (baseline column: defaults kept)", mb(rss), mb(base), ratio(float64(rss), float64(base)), "", ""})
	}
	return rows
}

func mb(kb int) string { return fmt.Sprintf("%.1f MB", float64(kb)/1024) }

// settledRSS samples pid's RSS until it moved less than 1 % over a second (at most 30 s).
func settledRSS(pid int) int {
	prev, since := rssKB(pid), time.Now()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond) // sampling interval, not a wait for an event
		cur := rssKB(pid)
		if diff := cur - prev; diff*100 > prev || -diff*100 > prev {
			prev, since = cur, time.Now()
			continue
		}
		if time.Since(since) >= time.Second {
			return cur
		}
	}
	return rssKB(pid)
}

// childPid is the one child process of pid (the gateway's temporal-dev).
func childPid(t *testing.T, pid int) int {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	require.NoError(t, err)
	for _, f := range tasks {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if fields := strings.Fields(string(data)); len(fields) > 0 {
			child, err := strconv.Atoi(fields[0])
			require.NoError(t, err)
			return child
		}
	}
	t.Fatalf("gateway %d has no child process", pid)
	return 0
}
