package integration

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/workers"
)

// retriedToolCall runs one turn whose exec tool call is held while the
// gateway is SIGKILLed and another started with restartEnv; it returns the
// started event of the tool call's last attempt.
func retriedToolCall(t *testing.T, dev *testenv.DevServer, home *testenv.Home, session string, heartbeat time.Duration, restartEnv []string) *historypb.ActivityTaskStartedEventAttributes {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	gw, out, _ := startGateway(t, dev, home.Env(dev.Addr))
	bus := &channels.Bus{Client: dev.Client, Settings: testenv.Settings(protocol.Settings{Model: "test-model", LLMHeartbeat: heartbeat})}
	marker := filepath.Join(home.Workspace, session+".started")
	_, err := bus.Publish(ctx, protocol.Inbound{ID: session, SessionKey: "cli:" + session, Route: protocol.Route{Channel: "cli", ChatID: session}, Content: "run " + session, SentAt: time.Now()})
	require.NoError(t, err)
	require.Eventually(t, func() bool { _, err := os.Stat(marker); return err == nil }, time.Minute, 20*time.Millisecond,
		"the tool call never started:\n%s", out)
	require.NoError(t, gw.Process.Signal(syscall.SIGKILL))
	_, _ = gw.Process.Wait()

	next, _, _ := startGateway(t, dev, restartEnv)
	id := protocol.TurnWorkflowID("cli:" + session)
	var res protocol.TurnResult
	require.NoError(t, dev.Client.GetWorkflow(ctx, id, "").Get(ctx, &res))
	require.Equal(t, protocol.StopCompleted, res.StopReason)
	require.NoError(t, next.Process.Signal(syscall.SIGTERM))
	_, _ = next.Process.Wait()

	var last *historypb.ActivityTaskStartedEventAttributes
	tools := map[int64]bool{}
	it := dev.Client.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(t, err)
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == protocol.ActivityTool {
			tools[ev.GetEventId()] = true
		}
		if a := ev.GetActivityTaskStartedEventAttributes(); a != nil && tools[a.GetScheduledEventId()] {
			last = a
		}
	}
	require.NotNil(t, last, "no tool call in the history")
	return last
}

// TestRestartOnTheSameHostRetriesAtOnce: a gateway killed mid tool call and
// started again on the same host fails the dead process's attempt at start,
// so the retry does not wait for the heartbeat timeout; started as another
// host it leaves the attempt to the timeout.
func TestRestartOnTheSameHostRetriesAtOnce(t *testing.T) {
	dev := testenv.StartDevServer(t)
	model := execModel("touch %s.started; sleep 60")
	defer model.Close()
	home := testenv.NewHome(t, model.URL(), nil)

	// Same host: the default heartbeat timeout (10 s) would show in the failure.
	same := retriedToolCall(t, dev, home, "samehost", 10*time.Second, home.Env(dev.Addr))
	require.EqualValues(t, 2, same.GetAttempt())
	require.Contains(t, same.GetLastFailure().GetMessage(), "of this host is gone; retrying now")
	require.Equal(t, workers.WorkerGoneError, same.GetLastFailure().GetApplicationFailureInfo().GetType())

	// Another host cannot tell whether the process lives: the timeout decides.
	other := retriedToolCall(t, dev, home, "otherhost", 2*time.Second, home.Env(dev.Addr, workers.WorkerHostEnv+"=elsewhere"))
	require.EqualValues(t, 2, other.GetAttempt())
	require.Equal(t, enumspb.TIMEOUT_TYPE_HEARTBEAT, other.GetLastFailure().GetTimeoutFailureInfo().GetTimeoutType(),
		"last failure: %v", other.GetLastFailure())
}
