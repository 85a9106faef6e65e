package integration

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
	"github.com/nanobot-durable/nanobot/tools"
	"github.com/nanobot-durable/nanobot/tools/execsession"
)

// TestExecSessionOutlivesTheWorker starts bc as an exec session (in the
// sandbox, where bwrap runs), kills the worker's process group with SIGKILL and starts
// another: list_exec_sessions still shows bc running and write_stdin
// "2+2\n" gets "4" from it. Then the worker is killed while a write_stdin
// waits: the retried call reads the output again without writing again.
// An idle /stop ends the session.
func TestExecSessionOutlivesTheWorker(t *testing.T) {
	dev := testenv.StartDevServer(t)
	model := modeltest.New(
		modeltest.ToolCalls(modeltest.Call{ID: "start", Name: "exec", Args: `{"command":"bc -q","yield_time_ms":500,"timeout":600}`}),
		modeltest.Text("bc is running."),
	)
	defer model.Close()
	home := testenv.NewHome(t, model.URL(), nil)
	root := filepath.Join(home.Dir, ".nanobot", "exec-sessions")
	t.Cleanup(func() {
		list, _ := execsession.List(context.Background(), root)
		for _, s := range list {
			_ = execsession.End(context.Background(), root, s.ID, "")
		}
	})
	env := home.Env(dev.Addr, "NANOBOT_LLM_HEARTBEAT_TIMEOUT_S=2")
	worker, logs := startWorkerGroup(t, env)
	bus := &channels.Bus{Client: dev.Client, Settings: testenv.Settings(protocol.Settings{Model: "test-model", LLMHeartbeat: 2 * time.Second})}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	turn := func(id, text string) protocol.TurnResult {
		t.Helper()
		_, err := bus.Publish(ctx, protocol.Inbound{ID: id, SessionKey: "cli:bc", Route: protocol.Route{Channel: "cli", ChatID: "bc"}, Content: text, SentAt: time.Now()})
		require.NoError(t, err)
		var res protocol.TurnResult
		require.NoError(t, dev.Client.GetWorkflow(ctx, protocol.TurnWorkflowID("cli:bc"), "").Get(ctx, &res), "worker log:\n%s", logs)
		return res
	}

	require.Equal(t, "bc is running.", turn("m1", "start bc").ReplyPreview)
	started := journaledToolResults(t, home, "cli:bc")
	require.Len(t, started, 1)
	m := regexp.MustCompile(`Process running\. session_id: ([0-9a-f]{12})`).FindStringSubmatch(started[0])
	require.NotNil(t, m, "exec started no session: %s", started[0])
	id := m[1]
	info, err := os.Stat(root)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), info.Mode().Perm(), "the sessions' folder is private")

	if tools.NewSandbox(tools.SandboxLayout{}).Ready() == nil {
		require.NotEmpty(t, testenv.ProcessesRunning(t, "bwrap --new-session"), "bc runs in the sandbox where bwrap runs")
		sandboxed := false
		for _, p := range testenv.ProcessesRunning(t, "bc -q") {
			sandboxed = sandboxed || strings.Contains(p, "bwrap")
		}
		require.True(t, sandboxed, "bc runs in the sandbox: %v", testenv.ProcessesRunning(t, "bc -q"))
	}

	killWorkerGroup(t, worker)
	require.NotEmpty(t, testenv.ProcessesRunning(t, execsession.Marker+" "+filepath.Join(root, id)), "the supervisor died with the worker")
	require.NotEmpty(t, testenv.ProcessesRunning(t, "bc -q"), "bc died with the worker")
	worker, logs = startWorkerGroup(t, env)

	model.Script(
		modeltest.ToolCalls(modeltest.Call{ID: "list", Name: "list_exec_sessions", Args: `{}`}),
		modeltest.ToolCalls(modeltest.Call{ID: "add", Name: "write_stdin", Args: `{"session_id":"` + id + `","chars":"2+2\n","wait_for":"4"}`}),
		modeltest.Text("2+2 is 4."),
	)
	require.Equal(t, "2+2 is 4.", turn("m2", "add two and two").ReplyPreview)
	results := journaledToolResults(t, home, "cli:bc")
	require.Len(t, results, 3)
	require.Regexp(t, `^`+id+` \| running \| elapsed=\d+\.\ds \| idle=\d+\.\ds \| remaining=\d+\.\ds \| cwd=\S+ \| bc -q$`, results[1])
	require.True(t, strings.HasPrefix(results[2], "4\n\nProcess running. session_id: "+id+"\n"), results[2])

	// Killed while write_stdin waits for text bc never prints: the retry on the next worker writes nothing.
	model.Script(
		modeltest.ToolCalls(modeltest.Call{ID: "mul", Name: "write_stdin", Args: `{"session_id":"` + id + `","chars":"6*7\n","wait_for":"never","wait_timeout_ms":8000}`}),
		modeltest.Text("6*7 is 42."),
	)
	_, err = bus.Publish(ctx, protocol.Inbound{ID: "m3", SessionKey: "cli:bc", Route: protocol.Route{Channel: "cli", ChatID: "bc"}, Content: "multiply", SentAt: time.Now()})
	require.NoError(t, err)
	ring := filepath.Join(root, id, "out.ring")
	require.Eventually(t, func() bool {
		data, _ := os.ReadFile(ring)
		return strings.Contains(string(data), "42")
	}, time.Minute, 20*time.Millisecond, "bc never got 6*7; worker log:\n%s", logs)
	killWorkerGroup(t, worker)
	_, logs = startWorkerGroup(t, env)
	var res protocol.TurnResult
	require.NoError(t, dev.Client.GetWorkflow(ctx, protocol.TurnWorkflowID("cli:bc"), "").Get(ctx, &res), "worker log:\n%s", logs)
	require.Equal(t, "6*7 is 42.", res.ReplyPreview)
	results = journaledToolResults(t, home, "cli:bc")
	require.Len(t, results, 4)
	require.True(t, strings.HasPrefix(results[3], "42\n\nProcess running. session_id: "+id+"\n"), "the retry read 42 once: %s", results[3])
	require.True(t, strings.HasSuffix(results[3], "\nWait target not observed: 'never'"), results[3])
	data, err := os.ReadFile(ring)
	require.NoError(t, err)
	require.Equal(t, 1, strings.Count(string(data), "42"), "6*7 was written once: %q", data)

	require.Equal(t, "Stopped 1 task(s).", turn("m4", "/stop").ReplyPreview)
	require.Eventually(t, func() bool {
		return len(testenv.ProcessesRunning(t, "bc -q")) == 0 && len(testenv.ProcessesRunning(t, execsession.Marker+" "+filepath.Join(root, id))) == 0
	}, 30*time.Second, 50*time.Millisecond, "/stop left %v", testenv.ProcessesRunning(t, "bc -q"))
}

// TestStopDuringATurnEndsExecSessions starts a session in one turn and
// stops the next turn while its exec runs: /stop ends the session's process
// too, through the workspace host.
func TestStopDuringATurnEndsExecSessions(t *testing.T) {
	r := newRig(t, protocol.Settings{})
	root := filepath.Join(r.home.Dir, ".nanobot", "exec-sessions")
	t.Cleanup(func() {
		list, _ := execsession.List(context.Background(), root)
		for _, s := range list {
			_ = execsession.End(context.Background(), root, s.ID, "")
		}
	})
	// Found by what they run: in the sandbox their pids are of its own namespace.
	const background, long = "sleep 1000.0417", "sleep 60.0417"
	res, _, _ := r.turn(t, "stopsess", "start it",
		modeltest.ToolCalls(modeltest.Call{ID: "bg", Name: "exec", Args: `{"command":"` + background + `","yield_time_ms":0}`}),
		modeltest.Text("started"))
	require.Equal(t, "started", res.ReplyPreview)
	require.NotEmpty(t, testenv.ProcessesRunning(t, background))

	r.model.Script(modeltest.ToolCalls(modeltest.Call{ID: "long", Name: "exec", Args: `{"command":"` + long + `"}`}))
	r.send(t, "stopsess", "run something long")
	require.Eventually(t, func() bool { return len(testenv.ProcessesRunning(t, long)) > 0 }, time.Minute, 20*time.Millisecond)
	reply, err := r.bus.Publish(context.Background(), protocol.Inbound{ID: "stop-sess", SessionKey: "cli:stopsess", Route: protocol.Route{Channel: "cli", ChatID: "stopsess"}, Content: "/stop"})
	require.NoError(t, err)
	require.Equal(t, "Stopped 1 task(s).", reply)
	require.Eventually(t, func() bool {
		return len(testenv.ProcessesRunning(t, background)) == 0 && len(testenv.ProcessesRunning(t, long)) == 0
	}, time.Minute, 50*time.Millisecond, "/stop left %v", testenv.ProcessesRunning(t, "sleep "))
}

// journaledToolResults are the session's tool results, in order.
func journaledToolResults(t *testing.T, home *testenv.Home, key string) []string {
	t.Helper()
	_, msgs := sessionLines(t, home, key)
	var out []string
	for _, m := range msgs {
		if m.Role == chat.RoleTool {
			out = append(out, m.Content)
		}
	}
	return out
}

// startWorkerGroup runs `nanobot worker` as the leader of a process group,
// which killWorkerGroup ends as a terminal's Ctrl-C or a group kill would:
// an exec session's supervisor is in a session of its own and lives on.
func startWorkerGroup(t *testing.T, env []string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(testenv.NanobotBin(t), "worker")
	cmd.Env = env
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_, _ = cmd.Process.Wait()
	})
	return cmd, &logs
}

func killWorkerGroup(t *testing.T, w *exec.Cmd) {
	t.Helper()
	require.NoError(t, syscall.Kill(-w.Process.Pid, syscall.SIGKILL))
	_, _ = w.Process.Wait()
}
