package integration

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
	"github.com/nanobot-durable/nanobot/workflows"
)

// slowExec starts, then waits for the test to let it finish: a tool still
// running when the first binary is asked to stop.
const slowExec = `touch started && while [ ! -f release ]; do sleep 0.1; done && echo ran >> slow.txt`

// upgradeModel answers four sessions apart by their first user message: a
// slow tool, a risky command that waits for approval, a spawned subagent
// whose model call is held, and a cron job's firings.
type upgradeModel struct {
	mu       sync.Mutex
	subCalls int
}

func (m *upgradeModel) handle(req *modeltest.RecordedRequest) modeltest.Step {
	last := req.Messages[len(req.Messages)-1]
	var first string
	for _, msg := range req.Messages {
		if msg.Role == chat.RoleUser {
			first = msg.Content
			break
		}
	}
	switch {
	case strings.Contains(req.Messages[0].Content, "# Subagent"):
		m.mu.Lock()
		m.subCalls++
		n := m.subCalls
		m.mu.Unlock()
		if n == 1 {
			return modeltest.Block().Text("There are 3 files.")
		}
		return modeltest.Text("There are 3 files.")
	case strings.Contains(last.Content, "[Scheduled task]"):
		return modeltest.Text("Time to stretch!")
	case strings.Contains(last.Content, "[Subagent 'files' "):
		return modeltest.Text("Your helper reported back.")
	case last.Role == chat.RoleTool:
		return modeltest.Text("Tool said: " + last.Content)
	case strings.HasPrefix(first, "run the slow job"):
		return modeltest.ToolCalls(modeltest.Call{ID: "slow1", Name: "exec", Args: `{"command":"` + slowExec + `"}`})
	case strings.HasPrefix(first, "clean the build"):
		return modeltest.ToolCalls(modeltest.Call{ID: "call_rm", Name: "exec", Args: `{"command":"` + riskyExec + `"}`})
	case strings.HasPrefix(first, "how many files"):
		return modeltest.ToolCalls(modeltest.Call{ID: "sp1", Name: "spawn", Args: `{"task":"count the files in the workspace","label":"files"}`})
	}
	return modeltest.Text("ok")
}

// nextVersion is the second binary's version, so its build ID differs from the first's.
const nextVersion = "upgrade-next"

// buildUpgradeBinary builds nanobot with -tags upgradetest: the same code
// plus a workflow change behind a GetVersion marker (workflows.UpgradeTestChange).
func buildUpgradeBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "nanobot-next")
	cmd := exec.Command("go", "build", "-trimpath", "-tags", "upgradetest", "-ldflags", "-X main.version="+nextVersion, "-o", bin, "./cmd/nanobot")
	cmd.Dir = testenv.RepoRoot(t)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "build the second binary:\n%s", out)
	return bin
}

// upgradeRig is what the upgrade tests share: temporal-dev, upgradeModel, a
// home that asks before risky commands, a recording channel for the
// replies, and the two binaries' worker logs.
type upgradeRig struct {
	t            *testing.T
	dev          *testenv.DevServer
	model        *modeltest.Server
	home         *testenv.Home
	ch           *recordingChannel
	env          []string
	logs1, logs2 *testenv.SyncBuffer
}

const upgradeReplies = "upgrade-replies"

func newUpgradeRig(t *testing.T, env ...string) *upgradeRig {
	r := &upgradeRig{t: t, dev: testenv.StartDevServer(t)}
	m := &upgradeModel{}
	r.model = modeltest.New().Handle(m.handle)
	t.Cleanup(r.model.Close)
	r.home = testenv.NewHome(t, r.model.URL(), map[string]any{"tools": map[string]any{"approval": map[string]any{"mode": "risky"}}})
	r.env = r.home.Env(r.dev.Addr, append([]string{"NANOBOT_STREAM=false"}, env...)...)
	r.ch = startRecordingChannel(t, r.dev.Client, upgradeReplies, protocol.ChannelQueue("slack"))
	return r
}

func (r *upgradeRig) logs() string {
	s := r.logs1.String()
	if r.logs2 != nil {
		s += "\n--- second binary ---\n" + r.logs2.String()
	}
	return s
}

// await polls cond, failing at once when a worker reports a failed replay.
func (r *upgradeRig) await(cond func() bool, what string) {
	r.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		requireNoReplayFailure(r.t, r.logs(), what)
		require.True(r.t, time.Now().Before(deadline), "%s; worker logs:\n%s", what, r.logs())
		time.Sleep(100 * time.Millisecond)
	}
}

func (r *upgradeRig) route(chatID string) protocol.Route {
	return protocol.Route{Channel: "cli", ChatID: chatID, SenderID: "owner", Queue: upgradeReplies}
}

// startLongTurns begins a slow tool, a risky command waiting for approval
// and a subagent whose model call is held, and returns the approval request.
func (r *upgradeRig) startLongTurns() protocol.ApprovalRequest {
	publishTo(r.t, r.dev, r.route("slow"), "s1", "run the slow job")
	publishTo(r.t, r.dev, r.route("approve"), "a1", "clean the build")
	publishTo(r.t, r.dev, r.route("sub"), "b1", "how many files are there?")
	r.await(func() bool { _, err := os.Stat(filepath.Join(r.home.Workspace, "started")); return err == nil }, "the slow tool never started")
	req := waitingRequest(r.t, r.dev, "cli:approve", r.logs)
	r.await(func() bool { return r.model.Waiting() == 1 }, "the subagent never asked its model")
	return req
}

// release lets the slow tool and the subagent's model call finish.
func (r *upgradeRig) release() {
	require.NoError(r.t, os.WriteFile(filepath.Join(r.home.Workspace, "release"), nil, 0o644))
	r.model.Release()
}

// awaitLongTurnsAnswered approves the request and waits for the three turns' answers.
func (r *upgradeRig) awaitLongTurnsAnswered(req protocol.ApprovalRequest) {
	publishMessage(r.t, r.dev, ownerSealed(r.t, r.home, protocol.Inbound{ID: "a2", SessionKey: "cli:approve", Route: r.route("approve"), Content: "/approve " + req.ID}))
	r.await(func() bool { return answers(r.ch)["s1"] >= 1 }, "the slow tool's turn never replied")
	r.await(func() bool { return answers(r.ch)["a1"] >= 1 }, "the approved turn never replied")
	r.await(func() bool { return countTexts(r.ch, "Your helper reported back.") >= 1 }, "the subagent's report never reached the chat")
}

// requireOnce: the approved command and the slow tool ran once, every message was answered once, no replay failed.
func (r *upgradeRig) requireOnce() {
	require.Equal(r.t, 1, ranCount(r.t, r.home), "the approved command ran once")
	slow, err := os.ReadFile(filepath.Join(r.home.Workspace, "slow.txt"))
	require.NoError(r.t, err)
	require.Equal(r.t, "ran\n", string(slow), "the slow tool ran once")
	for id, n := range answers(r.ch) {
		require.Equal(r.t, 1, n, "message %s answered %d times", id, n)
	}
	require.Contains(r.t, textOf(r.ch, "s1"), "Tool said: ")
	require.Contains(r.t, textOf(r.ch, "a1"), "Tool said: ")
	requireNoReplayFailure(r.t, r.logs(), "after the upgrade")
}

// requireNoFailedWorkflowTask reads every run's history, failing on a workflow task that failed; each event goes to visit.
func (r *upgradeRig) requireNoFailedWorkflowTask(visit func(*historypb.HistoryEvent)) int {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp, err := r.dev.Client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{PageSize: 1000})
	require.NoError(r.t, err)
	for _, e := range resp.GetExecutions() {
		it := r.dev.Client.GetWorkflowHistory(ctx, e.GetExecution().GetWorkflowId(), e.GetExecution().GetRunId(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			ev, err := it.Next()
			require.NoError(r.t, err)
			if f := ev.GetWorkflowTaskFailedEventAttributes(); f != nil {
				require.Failf(r.t, "a workflow task failed", "%s: %s %s", e.GetExecution().GetWorkflowId(), f.GetCause(), f.GetFailure().GetMessage())
			}
			visit(ev)
		}
	}
	return len(resp.GetExecutions())
}

// TestUpgradeWithTurnsInFlight starts long turns on one binary (a slow
// tool, an approval waiting, a subagent's held model call, a cron job),
// stops it the way a user does (SIGTERM), and starts a second binary whose
// workflow code carries a change: every turn finishes once with its reply
// delivered, and no replay of a run in flight is nondeterministic.
func TestUpgradeWithTurnsInFlight(t *testing.T) {
	first := testenv.NanobotBin(t)
	next := buildUpgradeBinary(t)
	r := newUpgradeRig(t)
	var worker *exec.Cmd
	worker, _, r.logs1 = startNanobotFrom(t, first, r.env, "worker")
	_, stderr, code := runNanobot(t, r.env, "cron", "add", "--name", "stretch", "--message", "Remind me to stretch",
		"--every", "2", "--channel", "slack", "--to", "C9")
	require.Equal(t, 0, code, stderr)

	// Every kind of work is in flight on the first binary.
	req := r.startLongTurns()
	r.await(func() bool { return countTexts(r.ch, "Time to stretch!") >= 1 }, "the cron job never fired")

	// The upgrade: SIGTERM lets running activities finish (the slow tool,
	// the held model call), then the second binary takes over.
	require.NoError(t, worker.Process.Signal(syscall.SIGTERM))
	r.release()
	_, _ = worker.Process.Wait()
	cronBefore := countTexts(r.ch, "Time to stretch!")
	_, _, r.logs2 = startNanobotFrom(t, next, r.env, "worker")

	r.awaitLongTurnsAnswered(req)
	r.await(func() bool { return countTexts(r.ch, "Time to stretch!") >= cronBefore+2 }, "the cron job stopped firing after the upgrade")
	r.requireOnce()

	// The histories: no workflow task failed, and the second binary's change is live.
	marked := 0
	runs := r.requireNoFailedWorkflowTask(func(ev *historypb.HistoryEvent) {
		if ev.GetMarkerRecordedEventAttributes() != nil && strings.Contains(ev.String(), workflows.UpgradeTestChange) {
			marked++
		}
	})
	require.Positive(t, marked, "no run recorded the second binary's change marker")
	t.Logf("%d runs listed, %d recorded the change marker; %d answers delivered", runs, marked, len(answers(r.ch)))
}

// replayFailures are how the SDK logs a workflow task that failed: TMPRL1100
// is its non-determinism error (a replay whose commands differ from history).
var replayFailures = []string{"TMPRL1100", "nondeterministic", "Workflow panic", "Failed to process workflow task"}

func requireNoReplayFailure(t *testing.T, logs, when string) {
	t.Helper()
	for _, sign := range replayFailures {
		if i := strings.Index(logs, sign); i >= 0 {
			line := logs[strings.LastIndex(logs[:i], "\n")+1:]
			line, _, _ = strings.Cut(line, "\n")
			require.Failf(t, "a workflow task failed on replay", "%s: %s", when, line)
		}
	}
}

// answers counts, per inbound message ID, the answers (not approval asks
// or progress) delivered for it.
func answers(ch *recordingChannel) map[string]int {
	out := map[string]int{}
	for _, d := range ch.Deliveries() {
		if d.Kind != protocol.ReplyAnswer {
			continue
		}
		for _, id := range d.MessageIDs {
			out[id]++
		}
	}
	return out
}

// countTexts counts deliveries whose text contains s.
func countTexts(ch *recordingChannel, s string) int {
	n := 0
	for _, d := range ch.Deliveries() {
		if strings.Contains(d.Text, s) {
			n++
		}
	}
	return n
}

// textOf is the text delivered in answer to message id.
func textOf(ch *recordingChannel, id string) string {
	for _, d := range ch.Deliveries() {
		for _, m := range d.MessageIDs {
			if m == id && d.Kind == protocol.ReplyAnswer {
				return d.Text
			}
		}
	}
	return ""
}
