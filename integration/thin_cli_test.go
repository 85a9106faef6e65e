package integration

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/pairing"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// outputs reads a process's stdout and stderr as one text (banner and logs).
type outputs []*testenv.SyncBuffer

func (o outputs) String() string {
	var b strings.Builder
	for _, s := range o {
		b.WriteString(s.String())
	}
	return b.String()
}

// startNanobot runs a long-lived nanobot command in the background; at the
// end of the test it gets SIGTERM (then SIGKILL), and its output is shown if
// the test failed.
func startNanobot(t *testing.T, env []string, args ...string) (*exec.Cmd, *testenv.SyncBuffer, *testenv.SyncBuffer) {
	t.Helper()
	return startNanobotFrom(t, testenv.NanobotBin(t), env, args...)
}

// startNanobotFrom is startNanobot with the given nanobot binary.
func startNanobotFrom(t *testing.T, bin string, env []string, args ...string) (*exec.Cmd, *testenv.SyncBuffer, *testenv.SyncBuffer) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	var stdout, stderr testenv.SyncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		// A test that already stopped and reaped it gets ErrProcessDone here.
		if err := cmd.Process.Signal(syscall.SIGTERM); err == nil {
			exited := make(chan struct{})
			go func() { _, _ = cmd.Process.Wait(); close(exited) }()
			select {
			case <-exited:
			case <-time.After(15 * time.Second):
				_ = cmd.Process.Kill()
				<-exited
			}
		}
		if t.Failed() {
			t.Logf("nanobot %v output:\n%s\n%s", args, stdout.String(), stderr.String())
		}
	})
	return cmd, &stdout, &stderr
}

// startGateway runs `nanobot gateway` and waits until it serves turns.
func startGateway(t *testing.T, dev *testenv.DevServer, env []string) (*exec.Cmd, *testenv.SyncBuffer, *testenv.SyncBuffer) {
	t.Helper()
	cmd, out, errOut := startNanobot(t, env, "gateway")
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "Press Ctrl-C to stop.") }, time.Minute, 50*time.Millisecond,
		"gateway did not start:\n%s\n%s", out, errOut)
	// Its workers poll a moment after the banner; a CLI started before would not see them.
	require.Eventually(t, func() bool {
		resp, err := dev.Client.DescribeTaskQueue(context.Background(), protocol.TaskQueue, enumspb.TASK_QUEUE_TYPE_WORKFLOW)
		return err == nil && len(resp.GetPollers()) > 0
	}, 30*time.Second, 50*time.Millisecond)
	return cmd, out, errOut
}

func agentLog(t *testing.T, h *testenv.Home) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(filepath.Dir(h.ConfigPath), "logs", "agent.log"))
	require.NoError(t, err)
	return string(data)
}

// TestAgentIsAThinClientWhenAGatewayRuns: with a gateway serving the
// namespace, `agent -m` runs only its delivery queue; the gateway runs the
// turn, and the CLI still shows the tool progress (asked of the turn).
func TestAgentIsAThinClientWhenAGatewayRuns(t *testing.T) {
	dev := testenv.StartDevServer(t)
	model := modeltest.New(
		modeltest.ToolCalls(modeltest.Call{ID: "c1", Name: "exec", Args: `{"command":"sleep 1; echo done"}`}),
		modeltest.Text("All done."),
	)
	defer model.Close()
	home := testenv.NewHome(t, model.URL(), nil)
	env := home.Env(dev.Addr, "NANOBOT_LOG_LEVEL=info")
	_, _, gwErr := startGateway(t, dev, env)

	out, errOut, code := runNanobot(t, env, "agent", "-m", "run it")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "↳ exec sleep 1; echo done\nAll done.\n", out)
	require.Empty(t, errOut, "no SDK or worker log line reaches the terminal")
	log := agentLog(t, home)
	require.Contains(t, log, "thin_client=true")
	require.NotContains(t, log, "model replied", "the model was called by the gateway, not by the CLI")
	require.Contains(t, gwErr.String(), "model replied")
}

// TestClosedCLILosesNothing: a CLI killed mid-turn leaves the turn running
// on the gateway; its reply finds the CLI gone, is given up quietly, and the
// next CLI of that session shows it first, from the journal.
func TestClosedCLILosesNothing(t *testing.T) {
	dev := testenv.StartDevServer(t)
	model := modeltest.New(
		modeltest.Block().Text("The long answer."),
		modeltest.Text("And the next one."),
	)
	defer model.Close()
	home := testenv.NewHome(t, model.URL(), nil)
	env := home.Env(dev.Addr)
	_, gwOut, gwErr := startGateway(t, dev, env)

	first, _, _ := startNanobot(t, env, "agent", "-m", "think hard")
	require.Eventually(t, func() bool { return model.Waiting() == 1 }, time.Minute, 50*time.Millisecond)
	require.NoError(t, first.Process.Signal(syscall.SIGKILL))
	_, _ = first.Process.Wait()
	model.Release()

	out, errOut, code := runNanobot(t, env, "agent", "-m", "and then?")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "🐈 (while you were away) The long answer.\n")
	require.True(t, strings.HasSuffix(out, "And the next one.\n"), out)
	require.Less(t, strings.Index(out, "The long answer."), strings.Index(out, "And the next one."))
	require.Equal(t, 2, model.Count())
	for _, s := range []string{gwOut.String(), gwErr.String(), errOut} {
		require.NotContains(t, s, "delivery failed")
		require.NotContains(t, s, "ERROR")
	}
	requireDeliveryReported(t, dev, "cli:direct")

	// Shown once: a third CLI has nothing to catch up on.
	model.Script(modeltest.Text("Third."))
	out, errOut, code = runNanobot(t, env, "agent", "-m", "third")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "Third.\n", out)
	requireDeliveryReported(t, dev, "cli:direct")
}

// requireDeliveryReported: a CLI that left had reported its reply's
// delivery. A completion lost at exit kept the turn open for the
// delivery's 2-minute StartToClose, and the next CLI of the session
// waited for it ("a turn of this session is still running").
func requireDeliveryReported(t *testing.T, dev *testenv.DevServer, sessionKey string) {
	t.Helper()
	desc, err := dev.Client.DescribeWorkflowExecution(context.Background(), protocol.TurnWorkflowID(sessionKey), "")
	require.NoError(t, err)
	for _, a := range desc.GetPendingActivities() {
		require.NotEqual(t, protocol.ActivityDeliver, a.GetActivityType().GetName(), "a delivery to a CLI that left is still pending: %v", a)
	}
}

// TestCtrlCStopsTheTurnThenQuits: the first Ctrl-C stops the running turn
// (its work so far is saved) and the prompt comes back; Ctrl-C at the prompt quits.
func TestCtrlCStopsTheTurnThenQuits(t *testing.T) {
	dev := testenv.StartDevServer(t)
	model := modeltest.New(modeltest.Block().Text("never shown"))
	defer model.Close()
	home := testenv.NewHome(t, model.URL(), nil)
	cmd := exec.Command(testenv.NanobotBin(t), "agent")
	cmd.Env = home.Env(dev.Addr)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	var out, errOut testenv.SyncBuffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _, _ = cmd.Process.Wait() })

	_, err = io.WriteString(stdin, "a long task\n")
	require.NoError(t, err)
	require.Eventually(t, func() bool { return model.Waiting() == 1 }, time.Minute, 50*time.Millisecond, "%s\n%s", &out, &errOut)
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "Stopped 1 task(s).") }, 30*time.Second, 50*time.Millisecond,
		"%s\n%s", &out, &errOut)
	require.Eventually(t, func() bool { return strings.Count(out.String(), "You: ") == 2 }, 10*time.Second, 50*time.Millisecond,
		"the prompt comes back: %s", &out)
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		require.NoError(t, err, "%s\n%s", &out, &errOut)
	case <-time.After(20 * time.Second):
		t.Fatalf("Ctrl-C at the prompt did not quit:\n%s\n%s", &out, &errOut)
	}
	_, msgs := sessionLines(t, home, "cli:direct")
	require.Equal(t, "a long task", msgs[0].Content)
	require.Equal(t, "Error: Task interrupted before a response was generated.", msgs[len(msgs)-1].Content)
}

func TestPairingCommand(t *testing.T) {
	home := testenv.NewHome(t, "http://127.0.0.1:1/v1", nil)
	store := pairing.NewStore(filepath.Dir(home.ConfigPath))
	code, _, err := store.Request("telegram", "77|carol", "77")
	require.NoError(t, err)
	env := home.Env("127.0.0.1:1")

	out, errOut, code2 := runNanobot(t, env, "pairing", "list")
	require.Equal(t, 0, code2, errOut)
	require.Contains(t, out, code+"  telegram:77|carol (chat 77)")

	out, errOut, code2 = runNanobot(t, env, "pairing", "approve", code)
	require.Equal(t, 0, code2, errOut)
	require.Contains(t, out, "Approved telegram:77|carol")
	ok, err := store.IsApproved("telegram", "77")
	require.NoError(t, err)
	require.True(t, ok)

	_, errOut, code2 = runNanobot(t, env, "pairing", "approve", code)
	require.Equal(t, 1, code2)
	require.Contains(t, errOut, "Cannot approve")

	out, errOut, code2 = runNanobot(t, env, "pairing", "revoke", "carol")
	require.Equal(t, 0, code2, errOut)
	require.Contains(t, out, "Revoked 1")

	_, errOut, code2 = runNanobot(t, env, "pairing", "approve")
	require.Equal(t, 2, code2)
	require.Contains(t, errOut, "want list | approve CODE")
}

// TestAgentAfterAgentRunsItsOwnWorkers: without a gateway, a CLI started
// right after another one left does not take the pollers the server still
// lists for the first for a worker (it waited 10 s for it); the second CLI
// of a session right after the first finds no turn still running.
func TestAgentAfterAgentRunsItsOwnWorkers(t *testing.T) {
	dev := testenv.StartDevServer(t)
	model := modeltest.New(modeltest.Text("one"), modeltest.Text("two"), modeltest.Text("three"), modeltest.Text("four"))
	defer model.Close()
	home := testenv.NewHome(t, model.URL(), nil)
	env := home.Env(dev.Addr, "NANOBOT_LOG_LEVEL=info")

	for _, want := range []string{"one", "two"} {
		out, errOut, code := runNanobot(t, env, "agent", "-m", "hi")
		require.Equal(t, 0, code, errOut)
		require.Equal(t, want+"\n", out, "no \"still running\" line before the reply")
	}
	log := agentLog(t, home)
	require.Equal(t, 2, strings.Count(log, "thin_client=false"), log)
	require.NotContains(t, log, "no worker answered the turn")

	_, _, _ = startGateway(t, dev, env)
	for _, want := range []string{"three", "four"} {
		out, errOut, code := runNanobot(t, env, "agent", "-m", "hi")
		require.Equal(t, 0, code, errOut)
		require.Equal(t, want+"\n", out, "no \"still running\" line before the reply")
	}
	require.Equal(t, 2, strings.Count(agentLog(t, home), "thin_client=true"))
}

// TestWorkersPollUnderTheBinarysVersion: a gateway's pollers carry the binary's version as
// their build ID (shown for every task in the Web UI), not the SDK's 32-hex checksum.
func TestWorkersPollUnderTheBinarysVersion(t *testing.T) {
	dev := testenv.StartDevServer(t)
	model := modeltest.New()
	t.Cleanup(model.Close)
	h := testenv.NewHome(t, model.URL(), nil)
	out, _, code := runNanobot(t, h.Env(dev.Addr), "version")
	require.Equal(t, 0, code)
	want := strings.TrimSpace(strings.TrimPrefix(out, "nanobot "))
	gw, _, _ := startGateway(t, dev, h.Env(dev.Addr))
	defer stopGateway(gw)
	resp, err := dev.Client.DescribeTaskQueue(context.Background(), protocol.TaskQueue, enumspb.TASK_QUEUE_TYPE_WORKFLOW)
	require.NoError(t, err)
	require.NotEmpty(t, resp.GetPollers())
	for _, p := range resp.GetPollers() {
		require.Equal(t, want, p.GetWorkerVersionCapabilities().GetBuildId(), "poller %s", p.GetIdentity())
	}
}
