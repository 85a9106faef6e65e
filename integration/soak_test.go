package integration

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/nanobot-durable/nanobot/channels/discord/discordpeer"
	"github.com/nanobot-durable/nanobot/channels/slack/slackpeer"
	"github.com/nanobot-durable/nanobot/internal/pgtest"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// soakProc is one component the chaos loop kills and restarts.
type soakProc struct {
	name    string
	pids    func() []int // the process and, for PostgreSQL, its backends
	pprof   string       // NANOBOT_PPROF address for goroutine counts; "" counts threads (tasks)
	kill    func()
	start   func()
	kills   int
	started time.Time
	samples []soakSample
}

// TestSoak drives steady traffic through one gateway — Slack (slackpeer, a
// thread per message), Discord (discordpeer, a person in a DM who answers
// approval requests by typing /approve) and the web chat's /api/send — with
// multi-tool turns, approvals, subagents and a cron job, on a stateless
// worker and a workspace host, temporal-dev and a private PostgreSQL, while a
// chaos loop kills each of the five, round after round in a random order at
// random moments, and restarts it as systemd would. It prints a table of
// messages in / answered once / twice / lost per channel and kind, execs
// run once / twice, kills, per-process samples each minute with a trend
// check, and disk growth per hour; it fails on a lost or twice-answered
// message or an exec run twice. NANOBOT_SOAK_MINUTES sets the length (make
// soak: 30); unset, it does not run.
func TestSoak(t *testing.T) {
	minutes := envInt("NANOBOT_SOAK_MINUTES", 0)
	if minutes == 0 {
		t.Skip("the soak runs under make soak (NANOBOT_SOAK_MINUTES)")
	}
	root, err := os.MkdirTemp("", "nanobot-soak-")
	require.NoError(t, err)
	require.NoError(t, os.Chmod(root, 0o755)) // the cluster's owner (nanobot-pg as root) must reach its dir
	pg := startPrivatePostgres(t, root)
	t.Setenv(pgtest.EnvVar, pg.url)
	t.Cleanup(func() { _ = os.RemoveAll(root) })

	dbURL := temporalOnPostgres(t)
	port := testenv.FreePort(t)
	dev := testenv.StartDevServerOn(t, port, "--db", dbURL)
	quiet := sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	c, err := client.Dial(client.Options{HostPort: dev.Addr, Logger: quiet}) // outlives the killed server's
	require.NoError(t, err)
	t.Cleanup(c.Close)

	model := modeltest.New().Handle(soakModel)
	defer model.Close()
	slack := slackpeer.New(t)
	dc := discordpeer.New(t)
	dc.DM(discordDM)
	webPort := testenv.FreePort(t)
	webBase := fmt.Sprintf("http://127.0.0.1:%d/", webPort)
	nanobotDB := pgtest.Database(t)
	common := map[string]any{"database": map[string]any{"url": nanobotDB},
		"tools": map[string]any{"approval": map[string]any{"mode": "risky"}}}
	gwCfg := map[string]any{"channels": map[string]any{
		"slack": map[string]any{"enabled": true, "botToken": "xoxb-soak", "appToken": "xapp-soak", "apiBase": slack.APIURL(),
			"allowFrom": []string{soakSlackUser}},
		"discord": map[string]any{"enabled": true, "token": discordpeer.Token, "apiBase": dc.URL(),
			"allowFrom": []string{discordAlice.ID}, "workingEmoji": ""},
		"web": map[string]any{"enabled": true, "port": webPort},
	}}
	maps.Copy(gwCfg, common)
	gwHome, aHome, wHome := testenv.NewHome(t, model.URL(), gwCfg), testenv.NewHome(t, model.URL(), common), testenv.NewHome(t, model.URL(), common)
	require.NoError(t, os.WriteFile(filepath.Join(wHome.Workspace, "seed.txt"), []byte("seed\n"), 0o644))

	var procs []*soakProc
	var gatewayLogs *bytes.Buffer
	var gatewayKills []time.Time
	nanobotProc := func(name string, h *testenv.Home, args ...string) *soakProc {
		addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
		p := &soakProc{name: name, pprof: addr}
		var cmd *exec.Cmd
		p.start = func() {
			var logs *bytes.Buffer
			cmd, logs = startHost(t, h.Env(dev.Addr, "NANOBOT_PPROF="+addr), args...)
			if name == "gateway" {
				gatewayLogs = logs
			}
		}
		p.kill = func() { killGroup(cmd) }
		p.pids = func() []int { return []int{cmd.Process.Pid} }
		p.start()
		return p
	}
	gateway := nanobotProc("gateway", gwHome, "gateway", "--workspace=false") // the workspace host alone runs the tools
	// Slack sends hello on each new Socket Mode connection.
	greet := func(before int) {
		for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if slack.Connections() > before && slack.GreetNewest() {
				return
			}
		}
	}
	startGateway := gateway.start
	gateway.start = func() { before := slack.Connections(); startGateway(); go greet(before) }
	killGateway := gateway.kill
	gateway.kill = func() { gatewayKills = append(gatewayKills, time.Now()); killGateway() }
	greet(0)
	procs = append(procs, gateway,
		nanobotProc("worker", aHome, "worker"),
		nanobotProc("workspace", wHome, "worker", "--workspace"),
		&soakProc{name: "temporal-dev", pids: func() []int { return []int{dev.Pid()} }, kill: func() { dev.Kill() },
			start: func() { dev = testenv.StartDevServerOn(t, port, "--db", dbURL) }},
		&soakProc{name: "postgres", pids: func() []int { return append([]int{pg.pid()}, childPids(pg.pid())...) }, kill: pg.kill, start: func() { pg.start(t) }},
	)
	require.Eventually(t, dc.Connected, 2*time.Minute, 50*time.Millisecond, "the Discord gateway never identified:\n%s", gatewayLogs)
	out, stderr, code := runNanobot(t, gwHome.Env(dev.Addr), "cron", "add", "--name", "soak", "--message", "soak cron",
		"--every", "30", "--channel", "slack", "--to", soakCronChannel)
	require.Equal(t, 0, code, stderr)
	cronJob := jobIDFrom(t, strings.TrimSpace(out))

	ledger := &soakLedger{sent: map[string]soakSent{}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	for _, traffic := range []func(){
		func() { slackTraffic(ctx, slack, ledger) },
		func() { webTraffic(ctx, webBase, ledger) },
		func() { discordTraffic(ctx, dc, discordDM, discordAlice, ledger) },
	} {
		wg.Add(1)
		go func() { defer wg.Done(); traffic() }()
	}

	disk := soakDisk{root: root, homes: []string{gwHome.Dir, aHome.Dir, wHome.Dir}, pgDir: pg.dir, admin: pg.url}
	began := time.Now()
	for _, p := range procs {
		p.started = began
	}
	end := began.Add(time.Duration(minutes) * time.Minute)
	kills := newKillPlan(len(procs), minutes, began.Add(20*time.Second), end.Add(-10*time.Second))
	var diskSamples []soakDiskSample
	nextSample := began.Add(30 * time.Second) // first sample once the pprof endpoints serve
	for time.Now().Before(end) {
		if !time.Now().Before(nextSample) {
			for _, p := range procs {
				p.samples = append(p.samples, sampleProc(time.Since(began), time.Since(p.started), p.pids(), p.pprof))
			}
			diskSamples = append(diskSamples, disk.sample(time.Since(began)))
			r := collectSoak(t, c, slack, dc, webBase, ledger, wHome, cronJob, gatewayKills)
			t.Logf("%s: %d messages in, %d answered once so far; cron %d runs, %d answers", time.Since(began).Round(time.Second),
				len(r.tags), r.count("once"), r.cronRuns, r.cronAnswers)
			nextSample = nextSample.Add(time.Minute)
		}
		if i, ok := kills.due(time.Now()); ok {
			p := procs[i]
			p.kill()
			p.kills++
			time.Sleep(time.Duration(rand.IntN(3000)) * time.Millisecond) // down a moment, as before systemd restarts it
			p.start()
			p.started = time.Now()
			t.Logf("%s: killed %s (kill %d)", time.Since(began).Round(time.Second), p.name, p.kills)
		}
		time.Sleep(200 * time.Millisecond)
	}
	cancel()
	wg.Wait()
	elapsed := time.Since(began)
	diskSamples = append(diskSamples, disk.sample(elapsed))

	// Everything is up now: every message must be answered; what is not by then counts as lost.
	var res soakResults
	for deadline, told := time.Now().Add(5*time.Minute), time.Now(); ; time.Sleep(2 * time.Second) {
		res = collectSoak(t, c, slack, dc, webBase, ledger, wHome, cronJob, gatewayKills)
		if res.settled() || time.Now().After(deadline) {
			break
		}
		if time.Since(told) > 30*time.Second {
			t.Logf("waiting for %v; cron: %d runs completed, %d running, %d answers", res.unanswered(), res.cronRuns, res.cronOpen, res.cronAnswers)
			told = time.Now()
		}
	}
	table, failures := res.report(procs, kills.perProc, elapsed, diskSamples)
	fmt.Print(table)
	if len(failures) > 0 {
		t.Logf("last gateway's log:\n%s", gatewayLogs)
		for _, tag := range res.tags {
			if o := res.outcome(tag); o == "lost" || o == "twice" {
				sent := res.ledger[tag]
				out, errOut, _ := runNanobot(t, gwHome.Env(dev.Addr), "turn", "show", sent.session)
				t.Logf("%s %s, sent at %s: nanobot turn show %s:\n%s%s", tag, o, sent.at.Sub(began).Round(time.Second), sent.session, out, errOut)
			}
		}
	}
	require.Empty(t, failures)
}

// killPlan spaces the kills evenly over the run, each at a random moment of
// its slot, in rounds that kill every component once in a random order:
// every component is killed perProc times, max(2, minutes/5) (6 in 30 minutes).
type killPlan struct {
	at      []time.Time
	order   []int
	perProc int
}

func newKillPlan(procs, minutes int, from, to time.Time) *killPlan {
	k := &killPlan{perProc: max(2, (minutes+4)/5)}
	total := k.perProc * procs
	slot := to.Sub(from) / time.Duration(total)
	for i := range total {
		k.at = append(k.at, from.Add(time.Duration(i)*slot+time.Duration((0.2+0.7*rand.Float64())*float64(slot))))
	}
	for range k.perProc {
		k.order = append(k.order, rand.Perm(procs)...)
	}
	return k
}

// due is the component to kill now, if its moment has come.
func (k *killPlan) due(now time.Time) (int, bool) {
	if len(k.at) == 0 || now.Before(k.at[0]) {
		return 0, false
	}
	i := k.order[0]
	k.at, k.order = k.at[1:], k.order[1:]
	return i, true
}

func dirBytes(dir string) int64 {
	var total int64
	_ = filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			total += info.Size()
		}
		return nil
	})
	return total
}

// privatePostgres is a cluster of e2e/postgres.sh's in a directory of the soak's own.
type privatePostgres struct{ dir, url string }

func startPrivatePostgres(t *testing.T, root string) *privatePostgres {
	pg := &privatePostgres{dir: filepath.Join(root, "pg")}
	pg.start(t)
	t.Cleanup(func() {
		cmd := exec.Command("bash", filepath.Join(testenv.RepoRoot(t), "e2e", "postgres.sh"), "--stop")
		cmd.Env = append(os.Environ(), "NANOBOT_PG_DIR="+pg.dir)
		_ = cmd.Run()
	})
	return pg
}

// start runs the script; a restart must come back on the same URL, as the hosts' config names it.
func (pg *privatePostgres) start(t *testing.T) {
	urlFile := filepath.Join(filepath.Dir(pg.dir), "postgres.url")
	cmd := exec.Command("bash", filepath.Join(testenv.RepoRoot(t), "e2e", "postgres.sh"), urlFile)
	cmd.Env = append(os.Environ(), "NANOBOT_PG_DIR="+pg.dir)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	data, err := os.ReadFile(urlFile)
	if err != nil {
		serverLog, _ := os.ReadFile(filepath.Join(pg.dir, "server.log"))
		require.NoError(t, err, "postgres.sh wrote no URL: %s\nserver.log:\n%s", out, tail(string(serverLog), 3000))
	}
	url := strings.TrimSpace(string(data))
	if pg.url != "" {
		require.Equal(t, pg.url, url, "PostgreSQL came back on another port")
	}
	pg.url = url
}

// tail is the last n bytes of s.
func tail(s string, n int) string { return s[max(0, len(s)-n):] }

func (pg *privatePostgres) pid() int {
	data, _ := os.ReadFile(filepath.Join(pg.dir, "data", "postmaster.pid"))
	pid, _ := strconv.Atoi(strings.SplitN(string(data), "\n", 2)[0])
	return pid
}

// kill SIGKILLs the postmaster and its backends, as a crash of the machine's
// PostgreSQL would; a backend left running would hold the shared memory and stop the restart.
func (pg *privatePostgres) kill() {
	pid := pg.pid()
	if pid <= 0 {
		return
	}
	all := append(childPids(pid), pid)
	for _, p := range all {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
	for _, p := range all {
		for testenv.Alive(p) {
			time.Sleep(20 * time.Millisecond)
		}
	}
	// The lock files name the postmaster, which stays a zombie until this container's init reaps it
	// (systemd, its parent elsewhere, reaps at once); PostgreSQL takes a zombie for a live postmaster.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline) && syscall.Kill(pid, 0) == nil; {
		time.Sleep(20 * time.Millisecond)
	}
	locks, _ := filepath.Glob(filepath.Join(pg.dir, "sock", ".s.PGSQL.*.lock"))
	for _, f := range append(locks, filepath.Join(pg.dir, "data", "postmaster.pid")) {
		_ = os.Remove(f)
	}
}

// childPids are the processes whose parent is pid, read from /proc.
func childPids(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// The fields after the command's closing parenthesis: state, then the parent's pid.
		if i := strings.LastIndexByte(string(stat), ')'); i > 0 {
			if f := strings.Fields(string(stat[i+1:])); len(f) > 1 && f[1] == strconv.Itoa(pid) {
				out = append(out, child)
			}
		}
	}
	return out
}
