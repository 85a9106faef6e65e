package integration

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
	"github.com/nanobot-durable/nanobot/workers"
)

// chaosSteps are the tool calls of every chaos turn, in order: a read, a
// write, an exec that appends to a counter file, and a message send.
var chaosSteps = []string{"read", "write", "exec", "msg"}

var chaosTurnTag = regexp.MustCompile(`chaos-turn-(\d+)`)

// chaosModel answers from the request alone, so a retried call gets the
// same answer: the next step of the latest chaos turn whose result the
// request lacks, then "done N".
type chaosModel struct {
	mu    sync.Mutex
	asked map[int]int // model requests per turn number
}

func (c *chaosModel) step(req *modeltest.RecordedRequest) modeltest.Step {
	turn := -1
	results := map[string]bool{}
	for _, m := range req.Messages {
		if m.Role == "user" {
			if s := chaosTurnTag.FindStringSubmatch(m.Content); s != nil {
				turn, _ = strconv.Atoi(s[1])
			}
		}
		if m.Role == "tool" {
			results[m.ToolCallID] = true
		}
	}
	c.mu.Lock()
	c.asked[turn]++
	c.mu.Unlock()
	delay := time.Duration(rand.IntN(150)) * time.Millisecond
	for _, s := range chaosSteps {
		id := fmt.Sprintf("t%d-%s", turn, s)
		if results[id] {
			continue
		}
		call := modeltest.Call{ID: id}
		switch s {
		case "read":
			call.Name, call.Args = "read_file", `{"path":"seed.txt"}`
		case "write":
			call.Name, call.Args = "write_file", fmt.Sprintf(`{"path":"out/t%d.txt","content":"turn %d"}`, turn, turn)
		case "exec":
			call.Name, call.Args = "exec", fmt.Sprintf(`{"command":"echo t%d >> counter.txt; sleep 0.2"}`, turn)
		case "msg":
			call.Name, call.Args = "message", fmt.Sprintf(`{"content":"progress %d","channel":"slack","chat_id":"chaos-log"}`, turn)
		}
		return modeltest.ToolCalls(call).Delay(delay)
	}
	return modeltest.Text(fmt.Sprintf("done %d", turn)).Delay(delay)
}

func (c *chaosModel) requests(turn int) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.asked[turn]
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// TestChaosRepeatedKills runs N multi-tool turns and SIGKILLs the worker at
// a random moment of each, starting a new one at once; some sessions get a
// message while no worker runs. Every turn must finish with its reply,
// every side effect must have happened once (or been reported as an
// unknown outcome), and every message must be answered once.
// NANOBOT_CHAOS_KILLS sets N (make test: 3, make chaos: 50).
func TestChaosRepeatedKills(t *testing.T) {
	n := envInt("NANOBOT_CHAOS_KILLS", 3)
	dev := testenv.StartDevServer(t)
	cm := &chaosModel{asked: map[int]int{}}
	model := modeltest.New().Handle(cm.step)
	defer model.Close()
	home := testenv.NewHome(t, model.URL(), nil)
	require.NoError(t, os.WriteFile(filepath.Join(home.Workspace, "seed.txt"), []byte("seed\n"), 0o644))
	const queue = "chaos-replies"
	ch := startRecordingChannel(t, dev.Client, queue, protocol.ChannelQueue("slack"))
	// Even kills restart on the same host: the new worker fails the dead
	// one's attempts at once. Odd kills stand for a host that is gone: the
	// new worker names another host, so the heartbeat timeout decides.
	host := 0
	envOn := func(host int) []string {
		return home.Env(dev.Addr, fmt.Sprintf("%s=chaos-host-%d", workers.WorkerHostEnv, host))
	}
	worker, logs := startWorker(t, envOn(host))
	// The product's defaults (heartbeat timeout and all): resume times are the user's.
	bus := &channels.Bus{Client: dev.Client, Settings: testenv.Settings(protocol.Settings{Model: "test-model", Stream: true})}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(n)*3*time.Minute)
	defer cancel()

	var (
		resumes  = map[bool][]time.Duration{} // by host gone
		idle     int
		lost     []string
		wrong    []string
		messages []string // every inbound message ID
		sessions = map[string]bool{}
	)
	for i := 0; i < n; i++ {
		session := fmt.Sprintf("chaos-%d", i/10)
		sessions["cli:"+session] = true
		route := protocol.Route{Channel: "cli", ChatID: session, Queue: queue}
		id := fmt.Sprintf("t%d", i)
		messages = append(messages, id)
		_, err := bus.Publish(ctx, protocol.Inbound{ID: id, SessionKey: protocol.SessionKey(route.Channel, route.ChatID), Route: route, Content: fmt.Sprintf("chaos-turn-%d: do the steps", i), SentAt: time.Now()})
		require.NoError(t, err)

		// Kill at a random model call of the turn, a random moment after it.
		k := 1 + rand.IntN(len(chaosSteps)+1)
		require.Eventually(t, func() bool { return cm.requests(i) >= k || ch.answered()[id] > 0 },
			2*time.Minute, 5*time.Millisecond, "turn %d never reached model call %d; worker log:\n%s", i, k, logs)
		time.Sleep(time.Duration(rand.IntN(300)) * time.Millisecond)
		progress := func() string {
			return fmt.Sprintf("%d/%d/%d", model.Count(), journalSize(t, home, "cli:"+session), ch.answered()[id])
		}
		done := ch.answered()[id] > 0
		before := progress()
		require.NoError(t, worker.Process.Signal(syscall.SIGKILL))
		_, _ = worker.Process.Wait()
		killed := time.Now()
		hostGone := i%2 == 1
		if hostGone {
			host++
		}
		worker, logs = startWorker(t, envOn(host))
		if rand.IntN(3) == 0 { // a message while no worker runs
			pid := fmt.Sprintf("p%d", i)
			messages = append(messages, pid)
			_, err := bus.Publish(ctx, protocol.Inbound{ID: pid, SessionKey: protocol.SessionKey(route.Channel, route.ChatID), Route: route, Content: fmt.Sprintf("chaos-ping-%d", i), SentAt: time.Now()})
			require.NoError(t, err)
		}
		if done {
			idle++
		} else {
			for progress() == before && time.Since(killed) < 3*time.Minute {
				time.Sleep(5 * time.Millisecond)
			}
			resumes[hostGone] = append(resumes[hostGone], time.Since(killed))
			t.Logf("kill %d (host gone: %t): resumed after %s", i, hostGone, time.Since(killed).Round(10*time.Millisecond))
		}
		// Wait for this turn (and any message sent meanwhile) to be answered.
		deadline := time.Now().Add(3 * time.Minute)
		for time.Now().Before(deadline) && !allAnswered(ch, messages) {
			time.Sleep(20 * time.Millisecond)
		}
		if !allAnswered(ch, messages) {
			t.Logf("turn %d: not every message answered after 3 minutes; worker log:\n%s", i, logs)
			break
		}
		if reply := finalReply(ch, id); !strings.Contains(reply, fmt.Sprintf("done %d", i)) {
			wrong = append(wrong, fmt.Sprintf("turn %d replied %q", i, reply))
		}
	}

	answered := ch.answered()
	survived, doubleAnswers := 0, 0
	for _, id := range messages {
		switch {
		case answered[id] == 0:
			lost = append(lost, id)
		case answered[id] > 1:
			doubleAnswers++
		}
		if strings.HasPrefix(id, "t") && answered[id] > 0 {
			survived++
		}
	}
	dups, missing := chaosSideEffects(t, home, ch, n, sessions)
	summary := fmt.Sprintf("kills survived %d/%d, duplicate side effects %d, lost messages %d", survived, n, len(dups), len(lost))
	for _, gone := range []bool{false, true} {
		rs := resumes[gone]
		if len(rs) == 0 {
			continue
		}
		slices.Sort(rs)
		what := "restart on the same host"
		if gone {
			what = "host gone"
		}
		summary += fmt.Sprintf("; resume after a mid-turn kill, %s (%d kills): median %s, worst %s",
			what, len(rs), rs[len(rs)/2].Round(10*time.Millisecond), rs[len(rs)-1].Round(10*time.Millisecond))
	}
	wft := workflowTaskStats(t, dev)
	summary += fmt.Sprintf("; workflow tasks timed out: %d held by a killed worker, %d on its sticky queue; longest completed workflow task %s",
		wft.held, wft.sticky, wft.longest.Round(time.Millisecond))
	fmt.Println(summary)
	t.Log(summary)
	require.Empty(t, lost, "messages never answered")
	require.Zero(t, doubleAnswers, "messages answered twice")
	require.Empty(t, dups, "side effects or journal rows twice")
	require.Empty(t, missing, "side effects or journal rows missing")
	require.Empty(t, wrong, "wrong replies")
	require.Equal(t, n, survived)
}

func allAnswered(ch *recordingChannel, ids []string) bool {
	answered := ch.answered()
	for _, id := range ids {
		if answered[id] == 0 {
			return false
		}
	}
	return true
}

func finalReply(ch *recordingChannel, id string) string {
	for _, d := range ch.Deliveries() {
		if slices.Contains(d.MessageIDs, id) {
			return d.Text
		}
	}
	return ""
}

func journalSize(t *testing.T, h *testenv.Home, key string) int64 {
	st, err := os.Stat(sessionPath(t, h, key))
	if err != nil {
		return -1
	}
	return st.Size()
}
