package integration

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// TestGatewaySIGTERMResumesTheTurnOnNextStart: SIGTERM stops intake, lets
// running work finish for a bounded time, exits 0; the interrupted turn
// finishes on the next start.
func TestGatewaySIGTERMResumesTheTurnOnNextStart(t *testing.T) {
	dev := testenv.StartDevServer(t)
	model := modeltest.New(modeltest.Block().Text("too late"), modeltest.Text("Resumed answer."))
	defer model.Close()
	home := testenv.NewHome(t, model.URL(), nil)
	env := home.Env(dev.Addr, "NANOBOT_STOP_TIMEOUT_S=1", "NANOBOT_LLM_HEARTBEAT_TIMEOUT_S=2")
	gw, out, errOut := startGateway(t, dev, env)

	bus := &channels.Bus{Client: dev.Client, Settings: testenv.Settings(protocol.Settings{Model: "test-model", LLMHeartbeat: 2 * time.Second})}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err := bus.Publish(ctx, protocol.Inbound{ID: "m1", SessionKey: "cli:sigterm", Route: protocol.Route{Channel: "cli", ChatID: "sigterm"}, Content: "go", SentAt: time.Now()})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return model.Waiting() == 1 }, time.Minute, 50*time.Millisecond)

	require.NoError(t, gw.Process.Signal(syscall.SIGTERM))
	done := make(chan error, 1)
	go func() { done <- gw.Wait() }()
	select {
	case err := <-done:
		require.NoError(t, err, "exit status 0\n%s\n%s", out, errOut)
	case <-time.After(30 * time.Second):
		t.Fatalf("gateway did not stop on SIGTERM:\n%s\n%s", out, errOut)
	}
	require.Contains(t, out.String(), "stopping…")
	model.Release() // the interrupted call answers nobody

	startGateway(t, dev, env)
	var res protocol.TurnResult
	require.NoError(t, dev.Client.GetWorkflow(ctx, protocol.TurnWorkflowID("cli:sigterm"), "").Get(ctx, &res))
	require.Equal(t, protocol.StopCompleted, res.StopReason)
	require.Equal(t, "Resumed answer.", res.ReplyPreview)
	_, msgs := sessionLines(t, home, "cli:sigterm")
	require.Len(t, msgs, 2, "one user message, one reply: nothing doubled")
}

// TestGatewayBannerFollowsConfigReloads: a changed model is announced and
// used by the next turn; a changed channel block asks for a restart.
func TestGatewayBannerFollowsConfigReloads(t *testing.T) {
	dev := testenv.StartDevServer(t)
	model := modeltest.New(modeltest.Text("from the new model"))
	defer model.Close()
	home := testenv.NewHome(t, model.URL(), nil)
	env := home.Env(dev.Addr)
	_, out, _ := startGateway(t, dev, env)
	require.Contains(t, out.String(), "Model:    test-model")

	var cfg map[string]any
	data, err := os.ReadFile(home.ConfigPath)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &cfg))
	cfg["agents"].(map[string]any)["defaults"].(map[string]any)["model"] = "better-model"
	cfg["channels"] = map[string]any{"sendToolHints": false}
	data, err = json.Marshal(cfg)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(home.ConfigPath, data, 0o600))
	later := time.Now().Add(2 * time.Second)
	require.NoError(t, os.Chtimes(home.ConfigPath, later, later))
	require.Eventually(t, func() bool {
		return strings.Contains(out.String(), "Model:    better-model (was test-model) for new turns")
	},
		30*time.Second, 100*time.Millisecond, out.String())
	require.Contains(t, out.String(), "channel settings changed: restart the gateway")

	outCLI, errOut, code := runNanobot(t, env, "agent", "-m", "which model?")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "from the new model\n", outCLI)
	require.Equal(t, "better-model", model.Requests()[0].Model)
}
