package integration

import (
	"context"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
	"github.com/nanobot-durable/nanobot/visibility"
)

// subagentModel answers the main agent and its subagent apart (by the
// subagent's system prompt): the main agent spawns, then acknowledges, then
// relays the announced result; the subagent answers with subStep.
type subagentModel struct {
	mu      sync.Mutex
	main    []*modeltest.RecordedRequest
	sub     []*modeltest.RecordedRequest
	subStep func(n int) modeltest.Step
}

func (m *subagentModel) handle(req *modeltest.RecordedRequest) modeltest.Step {
	m.mu.Lock()
	defer m.mu.Unlock()
	if strings.Contains(req.Messages[0].Content, "# Subagent") {
		m.sub = append(m.sub, req)
		return m.subStep(len(m.sub))
	}
	m.main = append(m.main, req)
	last := req.Messages[len(req.Messages)-1]
	switch {
	case strings.Contains(last.Content, "[Subagent 'files' "):
		return modeltest.Text("Your helper reported back.")
	case last.Role == chat.RoleTool:
		return modeltest.Text("I've started a helper on it.")
	default:
		return modeltest.ToolCalls(modeltest.Call{ID: "sp1", Name: "spawn", Args: `{"task":"count the files in the workspace","label":"files"}`})
	}
}

func (m *subagentModel) counts() (int, int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.main), len(m.sub)
}

func subagentRun(t *testing.T, dev *testenv.DevServer) (string, enumspb.WorkflowExecutionStatus) {
	t.Helper()
	ids, err := visibility.RunningSubagents(context.Background(), dev.Client, protocol.TurnWorkflowID("cli:sub"), "cli:sub")
	require.NoError(t, err)
	if len(ids) == 0 {
		return "", enumspb.WORKFLOW_EXECUTION_STATUS_UNSPECIFIED
	}
	desc, err := dev.Client.DescribeWorkflowExecution(context.Background(), ids[0], "")
	require.NoError(t, err)
	return ids[0], desc.GetWorkflowExecutionInfo().GetStatus()
}

func publishSub(t *testing.T, dev *testenv.DevServer, id, text string) string {
	t.Helper()
	return publishMessage(t, dev, protocol.Inbound{ID: id, SessionKey: "cli:sub", Route: protocol.Route{Channel: "cli", ChatID: "sub"}, Content: text})
}

// publishMessage publishes msg into its session (cli:sub's settings) as it is.
func publishMessage(t *testing.T, dev *testenv.DevServer, msg protocol.Inbound) string {
	t.Helper()
	bus := &channels.Bus{Client: dev.Client, Settings: testenv.Settings(protocol.Settings{Model: "test-model", LLMHeartbeat: 2 * time.Second})}
	msg.SentAt = time.Now()
	reply, err := bus.Publish(context.Background(), msg)
	require.NoError(t, err)
	return reply
}

// TestSubagentReportsAfterItsTurnEnded: the turn that spawned the subagent
// ends first; the subagent's answer then arrives in the session as a new
// turn, and the main agent's next model request carries it. A worker killed
// while the subagent works loses nothing.
func TestSubagentReportsAfterItsTurnEnded(t *testing.T) {
	dev := testenv.StartDevServer(t)
	m := &subagentModel{subStep: func(n int) modeltest.Step {
		if n == 1 {
			return modeltest.Block().Text("lost with the worker")
		}
		return modeltest.Text("There are 3 files.")
	}}
	model := modeltest.New().Handle(m.handle)
	defer model.Close()
	home := testenv.NewHome(t, model.URL(), nil)
	env := home.Env(dev.Addr, "NANOBOT_LLM_HEARTBEAT_TIMEOUT_S=2")
	first, logs := startWorker(t, env)

	publishSub(t, dev, "m1", "how many files are there?")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var res protocol.TurnResult
	require.NoError(t, dev.Client.GetWorkflow(ctx, protocol.TurnWorkflowID("cli:sub"), "").Get(ctx, &res), logs)
	require.Equal(t, "I've started a helper on it.", res.ReplyPreview)
	require.Eventually(t, func() bool { return model.Waiting() == 1 }, time.Minute, 50*time.Millisecond, "the subagent asks its model")
	subID, status := subagentRun(t, dev)
	require.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, status, "the subagent outlives the turn that spawned it")
	require.True(t, strings.HasPrefix(subID, "subagent/"), subID)

	require.NoError(t, first.Process.Signal(syscall.SIGKILL))
	_, _ = first.Process.Wait()
	model.Release() // the killed worker's call answers nobody
	startWorker(t, env)

	require.Eventually(t, func() bool { mainN, _ := m.counts(); return mainN == 3 }, time.Minute, 100*time.Millisecond,
		"the announced result starts a turn in the origin session")
	_, subN := m.counts()
	require.Equal(t, 2, subN, "the subagent's model call was asked again after the worker died")
	m.mu.Lock()
	third := m.main[2]
	m.mu.Unlock()
	var announced string
	for _, msg := range third.Messages {
		if strings.Contains(msg.Content, "[Subagent 'files' completed]") {
			announced = msg.Content
		}
	}
	require.Contains(t, announced, "Task: count the files in the workspace")
	require.Contains(t, announced, "Result:\nThere are 3 files.")
	for _, tool := range m.sub[0].Tools {
		require.NotContains(t, []string{"message", "spawn", "cron"}, tool.Name, "a subagent has no %s", tool.Name)
	}

	require.NoError(t, dev.Client.GetWorkflow(ctx, subID, "").Get(ctx, nil))
	testenv.RecordHistory(t, dev.Client, subID, "", "subagent_run")
	require.Eventually(t, func() bool {
		var last protocol.TurnResult
		err := dev.Client.GetWorkflow(ctx, protocol.TurnWorkflowID("cli:sub"), "").Get(ctx, &last)
		return err == nil && last.ReplyPreview == "Your helper reported back."
	}, time.Minute, 200*time.Millisecond)
	_, msgs := sessionLines(t, home, "cli:sub")
	var spawnResult string
	for _, msg := range msgs {
		if msg.Role == chat.RoleTool && msg.ToolCallID == "sp1" {
			spawnResult = msg.Content
		}
	}
	require.Regexp(t, `^Subagent \[files\] started \(id: [0-9a-f]{8}\)\. I'll notify you when it completes\.$`, spawnResult)
}

// TestStopCancelsARunningSubagent: /stop in the origin session cancels the
// subagent it spawned, even after the spawning turn ended.
func TestStopCancelsARunningSubagent(t *testing.T) {
	dev := testenv.StartDevServer(t)
	m := &subagentModel{subStep: func(int) modeltest.Step { return modeltest.Block().Text("never") }}
	model := modeltest.New().Handle(m.handle)
	defer model.Close()
	home := testenv.NewHome(t, model.URL(), nil)
	_, logs := startWorker(t, home.Env(dev.Addr))

	publishSub(t, dev, "m1", "how many files are there?")
	require.Eventually(t, func() bool { return model.Waiting() == 1 }, time.Minute, 50*time.Millisecond, "%s", logs)
	subID, _ := subagentRun(t, dev)
	require.NotEmpty(t, subID)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, dev.Client.GetWorkflow(ctx, protocol.TurnWorkflowID("cli:sub"), "").Get(ctx, nil))

	require.Equal(t, "Stopped 1 task(s).", publishSub(t, dev, "m2", "/stop"))
	require.Eventually(t, func() bool {
		desc, err := dev.Client.DescribeWorkflowExecution(ctx, subID, "")
		return err == nil && desc.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED
	}, 30*time.Second, 100*time.Millisecond)
	model.Release()
	mainN, _ := m.counts()
	require.Equal(t, 2, mainN, "a cancelled subagent announces nothing")
}
