package integration

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// startWorker runs `nanobot worker` in the background.
func startWorker(t *testing.T, env []string, flags ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(testenv.NanobotBin(t), append([]string{"worker"}, flags...)...)
	cmd.Env = env
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_, _ = cmd.Process.Wait()
	})
	return cmd, &logs
}

// TestCrashMidTurnResumesWithoutRepeats kills the worker with SIGKILL while
// the model call of iteration 2 hangs, starts a new worker, and checks that
// the turn finishes from where it was: no model call or tool call repeated,
// every message journaled once.
func TestCrashMidTurnResumesWithoutRepeats(t *testing.T) {
	dev := testenv.StartDevServer(t)
	model := modeltest.New(
		modeltest.ToolCalls(modeltest.Call{ID: "call_1", Name: "write_file", Args: `{"path":"out.txt","content":"written once"}`}),
		modeltest.Block(),
		modeltest.Text("The file is written."),
	)
	defer model.Close()
	home := testenv.NewHome(t, model.URL(), nil)
	env := home.Env(dev.Addr, "NANOBOT_LLM_HEARTBEAT_TIMEOUT_S=2")

	first, logs := startWorker(t, env)
	settings := testenv.Settings(protocol.Settings{Model: "test-model", LLMHeartbeat: 2 * time.Second, Stream: true})
	bus := &channels.Bus{Client: dev.Client, Settings: settings}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err := bus.Publish(ctx, protocol.Inbound{ID: "m1", SessionKey: "cli:crash", Route: protocol.Route{Channel: "cli", ChatID: "crash"}, Content: "write the file", SentAt: time.Now()})
	require.NoError(t, err)

	require.Eventually(t, func() bool { return model.Waiting() == 1 }, time.Minute, 50*time.Millisecond,
		"iteration 2 never reached the model; worker log:\n%s", logs)
	require.Equal(t, 2, model.Count())
	require.NoError(t, first.Process.Signal(syscall.SIGKILL))
	_, _ = first.Process.Wait()

	startWorker(t, env)
	var res protocol.TurnResult
	require.NoError(t, dev.Client.GetWorkflow(ctx, protocol.TurnWorkflowID("cli:crash"), "").Get(ctx, &res))
	require.Equal(t, protocol.StopCompleted, res.StopReason)
	require.Equal(t, "The file is written.", res.ReplyPreview)
	require.Equal(t, 2, res.Iterations)

	// Iteration 1 was not asked again; iteration 2 was asked once more after the restart.
	require.Equal(t, 3, model.Count())
	data, err := os.ReadFile(filepath.Join(home.Workspace, "out.txt"))
	require.NoError(t, err)
	require.Equal(t, "written once", string(data))

	_, msgs := sessionLines(t, home, "cli:crash")
	var roles []string
	for _, m := range msgs {
		roles = append(roles, m.Role)
	}
	require.Equal(t, []string{"user", "assistant", "tool", "assistant"}, roles)
	require.Equal(t, "write the file", msgs[0].Content)
	require.Equal(t, "call_1", msgs[2].ToolCallID)
	require.Equal(t, "The file is written.", msgs[3].Content)
	last := model.Requests()[2]
	tools := 0
	for _, m := range last.Messages {
		if m.Role == chat.RoleTool {
			tools++
		}
	}
	require.Equal(t, 1, tools, "the retried call saw the tool result once")
	testenv.RecordHistory(t, dev.Client, "turn/cli:crash", "", "crash_resume")
}

// TestCrashDuringSideEffectNeverRunsItTwice kills the worker while exec
// runs; the retried tool call finds the claim and reports an unknown
// outcome to the model instead of running the command again.
func TestCrashDuringSideEffectNeverRunsItTwice(t *testing.T) {
	dev := testenv.StartDevServer(t)
	model := modeltest.New(
		modeltest.ToolCalls(modeltest.Call{ID: "once", Name: "exec", Args: `{"command":"echo ran >> runs.txt; sleep 20"}`}),
		modeltest.Text("I could not confirm the command finished."),
	)
	defer model.Close()
	home := testenv.NewHome(t, model.URL(), nil)
	env := home.Env(dev.Addr)
	first, logs := startWorker(t, env)
	bus := &channels.Bus{Client: dev.Client, Settings: testenv.Settings(protocol.Settings{Model: "test-model", LLMHeartbeat: 2 * time.Second})}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err := bus.Publish(ctx, protocol.Inbound{ID: "m1", SessionKey: "cli:once", Route: protocol.Route{Channel: "cli", ChatID: "once"}, Content: "run it"})
	require.NoError(t, err)
	runs := filepath.Join(home.Workspace, "runs.txt")
	require.Eventually(t, func() bool { _, err := os.Stat(runs); return err == nil }, time.Minute, 20*time.Millisecond,
		"the command never started; worker log:\n%s", logs)
	require.NoError(t, first.Process.Signal(syscall.SIGKILL))
	_, _ = first.Process.Wait()

	startWorker(t, env)
	var res protocol.TurnResult
	require.NoError(t, dev.Client.GetWorkflow(ctx, "turn/cli:once", "").Get(ctx, &res))
	require.Equal(t, protocol.StopCompleted, res.StopReason)
	data, err := os.ReadFile(runs)
	require.NoError(t, err)
	require.Equal(t, "ran\n", string(data), "the command ran exactly once")
	_, msgs := sessionLines(t, home, "cli:once")
	require.Contains(t, msgs[2].Content, "outcome unknown")
	require.Equal(t, 2, model.Count())
}
