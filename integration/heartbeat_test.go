package integration

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/nanobot-durable/nanobot/activities"
	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
	"github.com/nanobot-durable/nanobot/schedules"
	"github.com/nanobot-durable/nanobot/workers"
)

const heartbeatReply = "The build is red: 3 tests fail."

// heartbeatModel answers chats, heartbeat turns and the heartbeat's
// decision, whose verdict the test sets before each run.
type heartbeatModel struct {
	mu        sync.Mutex
	verdict   modeltest.Step
	turns     int      // heartbeat turn calls
	decisions int      // evaluate_notification calls
	turnTools []string // the tools the heartbeat turn was offered
}

func (m *heartbeatModel) handle(req *modeltest.RecordedRequest) modeltest.Step {
	m.mu.Lock()
	defer m.mu.Unlock()
	last := req.Messages[len(req.Messages)-1]
	switch {
	case len(req.Tools) == 1 && req.Tools[0].Name == activities.EvaluateNotificationTool:
		m.decisions++
		return m.verdict
	case strings.Contains(last.Content, "[Heartbeat]"):
		m.turns++
		m.turnTools = m.turnTools[:0]
		for _, tool := range req.Tools {
			m.turnTools = append(m.turnTools, tool.Name)
		}
		return modeltest.Text(heartbeatReply)
	}
	return modeltest.Text("hello")
}

func (m *heartbeatModel) set(verdict modeltest.Step) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.verdict = verdict
}

func (m *heartbeatModel) counts() (turns, decisions int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.turns, m.decisions
}

func decisionCall(args string) modeltest.Step {
	return modeltest.ToolCalls(modeltest.Call{ID: "eval_1", Name: activities.EvaluateNotificationTool, Args: args})
}

// heartbeatRun is one finished HeartbeatWorkflow with its result.
type heartbeatRun struct {
	exec client.WorkflowRun
	res  protocol.HeartbeatResult
}

// heartbeatRuns waits until at least n heartbeat runs have finished and returns them, oldest first.
func heartbeatRuns(t *testing.T, dev *testenv.DevServer, n int) []heartbeatRun {
	t.Helper()
	var runs []heartbeatRun
	require.Eventually(t, func() bool {
		resp, err := dev.Client.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{
			Query: "WorkflowType = '" + protocol.HeartbeatWorkflowName + "' AND ExecutionStatus != 'Running'"})
		require.NoError(t, err)
		if len(resp.Executions) < n {
			return false
		}
		execs := resp.Executions
		slices.SortFunc(execs, func(a, b *workflowpb.WorkflowExecutionInfo) int {
			return a.StartTime.AsTime().Compare(b.StartTime.AsTime())
		})
		runs = runs[:0]
		for _, e := range execs {
			require.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, e.Status, "heartbeat runs complete, whatever they decide")
			run := dev.Client.GetWorkflow(context.Background(), e.Execution.WorkflowId, e.Execution.RunId)
			var res protocol.HeartbeatResult
			require.NoError(t, run.Get(context.Background(), &res))
			runs = append(runs, heartbeatRun{exec: run, res: res})
		}
		return true
	}, time.Minute, 100*time.Millisecond, "%d heartbeat runs finish", n)
	return runs
}

// TestHeartbeatRunsOnlyWithActiveTasksAndNotifiesOnlyWhenTheDecisionSaysSo:
// the heartbeat schedule from the config (2 s here) fires without active
// tasks and asks no model; with tasks, one triggered run each: the decision
// says notify → the most recently active Telegram chat gets the turn's reply
// once; says no, fails with 401, or calls no tool → nobody is told. The
// heartbeat turn has no message tool and its session keeps its last 2 messages.
func TestHeartbeatRunsOnlyWithActiveTasksAndNotifiesOnlyWhenTheDecisionSaysSo(t *testing.T) {
	m := &heartbeatModel{}
	r := newTelegramRig(t, m.handle, map[string]any{
		"channels": map[string]any{"telegram": map[string]any{"enabled": true, "token": "123:test"}},
		"gateway":  map[string]any{"heartbeat": map[string]any{"enabled": true, "intervalS": 2, "keepRecentMessages": 2}},
	})
	dev, model, home, logs, inbox := r.dev, r.model, r.home, r.logs, r.inbox
	ctx := context.Background()

	// Two chats; "new" spoke last, so it is the most recently active.
	for _, chatID := range []string{"old", "new"} {
		publishTo(t, dev, protocol.Route{Channel: "telegram", ChatID: chatID, SenderID: "1"}, "m-"+chatID, "hi")
		require.Eventually(t, func() bool { return inbox.count(chatID, "hello") == 1 }, time.Minute, 50*time.Millisecond, "worker:\n%s", logs)
	}
	chatCalls := model.Count()

	// What the gateway registers from config.json.
	cfg, _, err := config.Load(home.ConfigPath)
	require.NoError(t, err)
	on, _ := workers.UpkeepSchedules(cfg)
	i := slices.IndexFunc(on, func(s schedules.Spec) bool { return s.ID == protocol.HeartbeatScheduleID })
	require.GreaterOrEqual(t, i, 0, "gateway.heartbeat.enabled makes the heartbeat schedule")
	require.NoError(t, schedules.Ensure(ctx, dev.Client, on[i]))
	t.Cleanup(func() { _ = schedules.Delete(context.Background(), dev.Client, protocol.HeartbeatScheduleID) })
	desc, err := schedules.Describe(ctx, dev.Client, protocol.HeartbeatScheduleID)
	require.NoError(t, err)
	require.Equal(t, 2*time.Second, desc.Schedule.Spec.Intervals[0].Every)
	require.Equal(t, enumspb.SCHEDULE_OVERLAP_POLICY_SKIP, desc.Schedule.Policy.Overlap)
	for k, want := range map[string]string{"name": "Heartbeat", "kind": "heartbeat", "session": protocol.HeartbeatSessionKey} {
		require.Contains(t, string(desc.Memo.Fields[k].GetData()), want, "memo %s", k)
	}

	// (a) The template's HEARTBEAT.md has no active tasks: runs finish without a model call.
	template, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "templates", "workspace", "HEARTBEAT.md"))
	require.NoError(t, err)
	hbFile := filepath.Join(home.Workspace, activities.HeartbeatFile)
	require.NoError(t, os.WriteFile(hbFile, template, 0o644))
	runs := heartbeatRuns(t, dev, 2)
	for _, r := range runs {
		require.False(t, r.res.Ran, "%+v", r.res)
	}
	require.Equal(t, chatCalls, model.Count(), "no active tasks, no model call")
	testenv.RecordHistory(t, dev.Client, runs[0].exec.GetID(), runs[0].exec.GetRunID(), "heartbeat_no_tasks")

	// Paused (as from the Web UI), it stops firing; runs are triggered one at a time from here.
	handle := dev.Client.ScheduleClient().GetHandle(ctx, protocol.HeartbeatScheduleID)
	require.NoError(t, handle.Pause(ctx, client.SchedulePauseOptions{Note: "test"}))
	var done int
	require.Eventually(t, func() bool {
		desc, err := handle.Describe(ctx)
		require.NoError(t, err)
		done = int(desc.Info.NumActions) // the scheduler's own count: no visibility lag
		return desc.Schedule.State.Paused && len(desc.Info.RunningWorkflows) == 0
	}, 30*time.Second, 100*time.Millisecond)
	require.Len(t, heartbeatRuns(t, dev, done), done)

	tasks := strings.Replace(string(template), "<!-- Add your periodic tasks below this line -->", "- check whether the build is green", 1)
	require.NoError(t, os.WriteFile(hbFile, []byte(tasks), 0o644))
	trigger := func(verdict modeltest.Step) protocol.HeartbeatResult {
		t.Helper()
		m.set(verdict)
		require.NoError(t, schedules.Trigger(ctx, dev.Client, protocol.HeartbeatScheduleID))
		done++
		runs := heartbeatRuns(t, dev, done)
		require.Len(t, runs, done, "paused: only the triggered run")
		return runs[done-1].res
	}

	// (b) The decision says notify: the newest chat gets the reply, once.
	res := trigger(decisionCall(`{"should_notify":true,"reason":"the build broke"}`))
	require.True(t, res.Ran)
	require.True(t, res.Notified, "%+v\nworker:\n%s", res, logs)
	require.Equal(t, "the build broke", res.Reason)
	require.NotNil(t, res.Route)
	require.True(t, res.Route.Equal(protocol.Route{Channel: "telegram", ChatID: "new"}), "%+v", res.Route)
	require.Equal(t, protocol.ReachSomeone, res.Route.Reach, "a gateway holds telegram: the route is stamped deliverable")
	require.Equal(t, 2, res.Kept, "keepRecentMessages 2")
	require.Equal(t, 1, inbox.count("new", heartbeatReply))
	require.Zero(t, inbox.count("old", heartbeatReply))
	m.mu.Lock()
	require.NotEmpty(t, m.turnTools)
	require.NotContains(t, m.turnTools, "message", "the heartbeat turn has no message tool")
	m.mu.Unlock()
	last := heartbeatRuns(t, dev, done)[done-1]
	testenv.RecordHistory(t, dev.Client, last.exec.GetID(), last.exec.GetRunID(), "heartbeat_notify")

	// (c) No, a failed decision, a decision without the tool: silence.
	for _, c := range []struct {
		verdict modeltest.Step
		reason  string
	}{
		{decisionCall(`{"should_notify":false,"reason":"routine check"}`), "routine check"},
		{modeltest.Error(401, "invalid_api_key", "bad key"), "the decision failed"},
		{modeltest.Text("I think you should tell them"), "did not call evaluate_notification"},
	} {
		res := trigger(c.verdict)
		require.True(t, res.Ran)
		require.False(t, res.Notified, "%+v", res)
		require.Contains(t, res.Reason, c.reason)
		if c.reason == "the decision failed" {
			last := heartbeatRuns(t, dev, done)[done-1]
			testenv.RecordHistory(t, dev.Client, last.exec.GetID(), last.exec.GetRunID(), "heartbeat_decision_failed")
		}
	}
	require.Equal(t, 1, inbox.count("new", heartbeatReply), "told once, for the one run that decided so")
	require.Zero(t, inbox.count("old", heartbeatReply))
	turns, decisions := m.counts()
	require.Equal(t, 4, turns, "one turn per run with tasks")
	require.Equal(t, 4, decisions, "one decision per completed turn (the 401 is not retried)")

	// (d) The heartbeat session keeps only the last run's exchange.
	_, msgs := sessionLines(t, home, protocol.HeartbeatSessionKey)
	require.Len(t, msgs, 2)
	require.Equal(t, chat.RoleUser, msgs[0].Role)
	require.Contains(t, msgs[0].Content, "- check whether the build is green")
	require.Equal(t, heartbeatReply, msgs[1].Content)
}
