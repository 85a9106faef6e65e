package integration

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
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

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/internal/pgtest"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// soakProc is one component the chaos loop kills and restarts.
type soakProc struct {
	name    string
	pid     func() int
	pprof   string // NANOBOT_PPROF address for goroutine counts; "" for non-Go-nanobot processes
	kill    func()
	start   func()
	kills   int
	samples []soakSample
}

type soakSample struct {
	at                     time.Duration
	pid, rssKB, fds, gorou int
}

// TestSoak drives steady multi-tool turns through a gateway, a stateless
// worker and a workspace host on temporal-dev and PostgreSQL (a private
// cluster, so killing it disturbs no other test) while a chaos loop kills
// one of the five at random and restarts it. It reports messages in,
// answered once / twice / lost, execs run once / twice, per-process RSS,
// goroutines and open files each minute, and disk growth per hour.
// NANOBOT_SOAK_MINUTES sets the length (make soak: 30); unset, it does not run.
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

	cm := &chaosModel{asked: map[int]int{}}
	model := modeltest.New().Handle(cm.step)
	defer model.Close()
	extra := map[string]any{"database": map[string]any{"url": pgtest.Database(t)}}
	gwHome, aHome, wHome := testenv.NewHome(t, model.URL(), extra), testenv.NewHome(t, model.URL(), extra), testenv.NewHome(t, model.URL(), extra)
	require.NoError(t, os.WriteFile(filepath.Join(wHome.Workspace, "seed.txt"), []byte("seed\n"), 0o644))
	const queue = "soak-replies"
	ch := startRecordingChannel(t, c, queue, protocol.ChannelQueue("slack"))

	var procs []*soakProc
	nanobotProc := func(name string, h *testenv.Home, args ...string) *soakProc {
		addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
		p := &soakProc{name: name, pprof: addr}
		var cmd *exec.Cmd
		p.start = func() { cmd, _ = startHost(t, h.Env(dev.Addr, "NANOBOT_PPROF="+addr), args...) }
		p.kill = func() { killGroup(cmd) }
		p.pid = func() int { return cmd.Process.Pid }
		p.start()
		return p
	}
	procs = append(procs,
		nanobotProc("gateway", gwHome, "gateway"),
		nanobotProc("worker", aHome, "worker"),
		nanobotProc("workspace", wHome, "worker", "--workspace"),
		&soakProc{name: "temporal-dev", pid: func() int { return dev.Pid() }, kill: func() { dev.Kill() },
			start: func() { dev = testenv.StartDevServerOn(t, port, "--db", dbURL) }},
		&soakProc{name: "postgres", pid: pg.pid, kill: pg.kill, start: func() { pg.start(t) }},
	)

	// Steady traffic: a message every second or two over eight sessions, each a multi-tool turn.
	bus := &channels.Bus{Client: c, Settings: testenv.Settings(protocol.Settings{Model: "test-model", Stream: true})}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var (
		mu       sync.Mutex
		messages []string
		wg       sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ctx.Err() == nil; i++ {
			route := protocol.Route{Channel: "cli", ChatID: fmt.Sprintf("soak-%d", i%8), Queue: queue}
			in := protocol.Inbound{ID: fmt.Sprintf("t%d", i), SessionKey: protocol.SessionKey(route.Channel, route.ChatID), Route: route,
				Content: fmt.Sprintf("chaos-turn-%d: do the steps", i), SentAt: time.Now()}
			for ctx.Err() == nil { // a publish refused while Temporal is down is retried, as a channel would
				pctx, pcancel := context.WithTimeout(ctx, 10*time.Second)
				_, err := bus.Publish(pctx, in)
				pcancel()
				if err == nil {
					mu.Lock()
					messages = append(messages, in.ID)
					mu.Unlock()
					break
				}
				time.Sleep(500 * time.Millisecond)
			}
			time.Sleep(time.Second + time.Duration(rand.IntN(1000))*time.Millisecond)
		}
	}()

	startDisk := dirBytes(root)
	began := time.Now()
	end := began.Add(time.Duration(minutes) * time.Minute)
	var order []int
	nextSample, nextKill := began.Add(30*time.Second), began.Add(20*time.Second) // first sample once the pprof endpoints serve
	for time.Now().Before(end) {
		if !time.Now().Before(nextSample) {
			for _, p := range procs {
				p.samples = append(p.samples, sampleProc(time.Since(began), p.pid(), p.pprof))
			}
			nextSample = nextSample.Add(time.Minute)
		}
		if !time.Now().Before(nextKill) {
			if len(order) == 0 { // each round kills every component once, in a random order
				order = rand.Perm(len(procs))
			}
			p := procs[order[0]]
			order = order[1:]
			p.kill()
			p.kills++
			time.Sleep(time.Duration(rand.IntN(3000)) * time.Millisecond) // down a moment, as before systemd restarts it
			p.start()
			t.Logf("%s: killed %s (kill %d)", time.Since(began).Round(time.Second), p.name, p.kills)
			nextKill = time.Now().Add(time.Duration(15+rand.IntN(30)) * time.Second)
		}
		time.Sleep(200 * time.Millisecond)
	}
	cancel()
	wg.Wait()
	elapsed := time.Since(began)
	diskGrowth := dirBytes(root) - startDisk

	// Everything is up now: every accepted message must be answered; what is not by then counts as lost.
	for deadline := time.Now().Add(5 * time.Minute); time.Now().Before(deadline) && !allAnswered(ch, messages); {
		time.Sleep(100 * time.Millisecond)
	}
	table, failures := soakReport(ch, messages, wHome, procs, elapsed, diskGrowth)
	fmt.Print(table)
	require.Empty(t, failures)
}

// soakReport is the table, and what breaks the promise: a lost or twice-answered message, an exec run twice.
func soakReport(ch *recordingChannel, messages []string, w *testenv.Home, procs []*soakProc, elapsed time.Duration, disk int64) (string, []string) {
	answered := ch.answered()
	once, twice, lost := 0, 0, 0
	for _, id := range messages {
		switch n := answered[id]; {
		case n == 0:
			lost++
		case n == 1:
			once++
		default:
			twice++
		}
	}
	runs := map[string]int{}
	data, _ := os.ReadFile(filepath.Join(w.Workspace, "counter.txt"))
	for _, tag := range strings.Fields(string(data)) {
		runs[tag]++
	}
	execOnce, execTwice := 0, 0
	for _, n := range runs {
		if n == 1 {
			execOnce++
		} else {
			execTwice++
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "soak %s: messages in %d, answered once %d, answered twice %d, lost %d; execs run once %d, twice %d; disk growth %.1f MB/hour\n",
		elapsed.Round(time.Second), len(messages), once, twice, lost, execOnce, execTwice, float64(disk)/1e6/elapsed.Hours())
	fmt.Fprintf(&b, "%-13s %5s  %s\n", "process", "kills", "minute: pid RSS(MB) goroutines fds")
	for _, p := range procs {
		fmt.Fprintf(&b, "%-13s %5d ", p.name, p.kills)
		for _, s := range p.samples {
			fmt.Fprintf(&b, " %d:%d/%.0f/%d/%d", int(s.at.Minutes()), s.pid, float64(s.rssKB)/1024, s.gorou, s.fds)
		}
		if g := growth(p.samples); g != "" {
			fmt.Fprintf(&b, "  GROWTH: %s", g)
		}
		b.WriteString("\n")
	}
	var failures []string
	for what, n := range map[string]int{"messages lost": lost, "messages answered twice": twice, "execs run twice": execTwice} {
		if n > 0 {
			failures = append(failures, fmt.Sprintf("%s: %d", what, n))
		}
	}
	return b.String(), failures
}

// growth names a resource whose last sample after warm-up (the first third) is 30% above its first, within one process life.
func growth(samples []soakSample) string {
	if len(samples) < 3 {
		return ""
	}
	first, last := samples[len(samples)/3], samples[len(samples)-1]
	if first.pid != last.pid {
		return "" // restarted meanwhile: compare only a process with itself
	}
	var grew []string
	for _, r := range []struct {
		name string
		a, b int
	}{{"rss", first.rssKB, last.rssKB}, {"goroutines", first.gorou, last.gorou}, {"fds", first.fds, last.fds}} {
		if r.a > 0 && float64(r.b) > 1.3*float64(r.a) {
			grew = append(grew, fmt.Sprintf("%s %d→%d", r.name, r.a, r.b))
		}
	}
	return strings.Join(grew, ", ")
}

// sampleProc reads RSS and open files from /proc and goroutines from the process's pprof endpoint.
func sampleProc(at time.Duration, pid int, pprof string) soakSample {
	s := soakSample{at: at, pid: pid, gorou: -1}
	if status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
		for _, line := range strings.Split(string(status), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
				s.rssKB, _ = strconv.Atoi(f[1])
			}
		}
	}
	if fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid)); err == nil {
		s.fds = len(fds)
	}
	if pprof != "" {
		if resp, err := http.Get("http://" + pprof + "/debug/pprof/goroutine?debug=1"); err == nil {
			head := make([]byte, 64)
			n, _ := io.ReadFull(resp.Body, head)
			_ = resp.Body.Close()
			if _, after, ok := strings.Cut(string(head[:n]), "total "); ok {
				s.gorou, _ = strconv.Atoi(strings.Fields(after)[0])
			}
		}
	}
	return s
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
	require.NoError(t, err, "postgres.sh wrote no URL: %s", out)
	url := strings.TrimSpace(string(data))
	if pg.url != "" {
		require.Equal(t, pg.url, url, "PostgreSQL came back on another port")
	}
	pg.url = url
}

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
