package integration

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/activities"
	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/workers"
)

// rssBaselineHomeEnv names the home the RSS baseline process works in; set
// only in that child process.
const rssBaselineHomeEnv = "NANOBOT_RSS_BASELINE_HOME"

// rssBaseline is B6's in-process baseline: a process of its own (this test
// binary, re-run) that builds the same activities from the same home and
// runs B4's baseline half (200 sessions × 3 turns at once) without a
// Temporal worker. It returns that process's RSS when idle (activities
// built) and its peak while the turns run, sampled as the gateway's is.
func rssBaseline(t *testing.T, h *testenv.Home) (idleKB, peakKB int) {
	cmd := exec.Command(os.Args[0], "-test.run", "^TestBenchRSSBaselineProcess$", "-test.count", "1")
	cmd.Env = append(os.Environ(), rssBaselineHomeEnv+"="+h.Dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr testenv.SyncBuffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	await := func(want string) {
		t.Helper()
		for {
			select {
			case l, ok := <-lines:
				require.True(t, ok, "the baseline process ended before %q:\n%s", want, stderr.String())
				if l == want {
					return
				}
			case <-time.After(5 * time.Minute):
				t.Fatalf("the baseline process never said %q:\n%s", want, stderr.String())
			}
		}
	}
	await("ready")
	idleKB = rssKB(cmd.Process.Pid)
	stop := make(chan struct{})
	var sampled sync.WaitGroup
	sampled.Add(1)
	go func() {
		defer sampled.Done()
		for {
			peakKB = max(peakKB, rssKB(cmd.Process.Pid))
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	_, err = io.WriteString(stdin, "go\n")
	require.NoError(t, err)
	await("done")
	close(stop)
	sampled.Wait()
	return idleKB, peakKB
}

// TestBenchRSSBaselineProcess is the child rssBaseline starts: it says
// "ready" once its activities are built, runs the turns on "go", says "done".
func TestBenchRSSBaselineProcess(t *testing.T) {
	dir := os.Getenv(rssBaselineHomeEnv)
	if dir == "" {
		t.Skip("runs only as the B6 baseline process of make bench")
	}
	h := &testenv.Home{Dir: dir, ConfigPath: filepath.Join(dir, ".nanobot", "config.json"), Workspace: filepath.Join(dir, "workspace")}
	cfg, _, err := config.Load(h.ConfigPath)
	require.NoError(t, err)
	b := &benchEnv{t: t, home: h, set: testenv.Settings(protocol.Settings{Model: "test-model", Stream: false})}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	b.deps, _, err = workers.NewActivities(cfg, nil, channels.NewManager(), channels.NewStreamHub(), quiet)
	b.acts = activities.New(b.deps)
	require.NoError(t, err)
	fmt.Println("ready")
	line, err := bufio.NewReader(os.Stdin).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "go", strings.TrimSpace(line))
	b.concurrent(t, "b6b-", func(chatID, text string) (time.Duration, error) { return b.baseline(chatID, text, b.set) })
	fmt.Println("done")
}

// TestBenchRSSBaselineMeasures: the B6 baseline process starts, runs its
// turns against the scripted model and reports an RSS (make bench only).
func TestBenchRSSBaselineMeasures(t *testing.T) {
	if os.Getenv("NANOBOT_BENCH_TABLE") == "" {
		t.Skip("the benchmark table runs with make bench (NANOBOT_BENCH_TABLE=1)")
	}
	b := newBenchEnv(t)
	idle, peak := rssBaseline(t, b.home)
	t.Logf("baseline process RSS: idle %.1f MB, peak %.1f MB", float64(idle)/1024, float64(peak)/1024)
	require.Positive(t, idle)
	require.GreaterOrEqual(t, peak, idle)
}
