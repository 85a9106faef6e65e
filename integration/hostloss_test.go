package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"

	"github.com/nanobot-durable/nanobot/activities"
	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
	"github.com/nanobot-durable/nanobot/workers"
)

// hostLossSlack is what a retry may take past the heartbeat timeout: the
// server's timer, the retry (protocol.RetryAtOnce) and the dispatch to the
// worker that polls. The 1 s first retry the calls had before was not.
const hostLossSlack = 900 * time.Millisecond

var runSession = regexp.MustCompile(`run (\w+)`)

// execModel asks for one exec of command (%s: the session), then says done.
func execModel(command string) *modeltest.Server {
	return modeltest.New().Handle(func(req *modeltest.RecordedRequest) modeltest.Step {
		last := req.Messages[len(req.Messages)-1]
		if last.Role == "tool" {
			return modeltest.Text("done")
		}
		session := "unknown"
		if m := runSession.FindStringSubmatch(last.Content); m != nil {
			session = m[1]
		}
		return modeltest.ToolCalls(modeltest.Call{ID: "exec-" + session, Name: "exec",
			Args: fmt.Sprintf(`{"command":%q}`, fmt.Sprintf(command, session))})
	})
}

// execHome is a temporal-dev and a home whose model asks for one exec of
// command (%s: the session).
func execHome(t *testing.T, command string) (*testenv.DevServer, *testenv.Home) {
	dev := testenv.StartDevServer(t)
	model := execModel(command)
	t.Cleanup(model.Close)
	return dev, testenv.NewHome(t, model.URL(), nil)
}

// runTurn sends "run <session>" to cli:<session>, on the product's settings.
func runTurn(ctx context.Context, t *testing.T, dev *testenv.DevServer, session string) string {
	bus := &channels.Bus{Client: dev.Client, Settings: testenv.Settings(protocol.Settings{Model: "test-model"})}
	_, err := bus.Publish(ctx, protocol.Inbound{ID: session, SessionKey: protocol.SessionKey("cli", session), Route: protocol.Route{Channel: "cli", ChatID: session}, Content: "run " + session, SentAt: time.Now()})
	require.NoError(t, err)
	return protocol.TurnWorkflowID("cli:" + session)
}

// toolAttempt is the history of a turn's one tool call: its last attempt's
// started event and when it completed.
type toolAttempt struct {
	started            *historypb.HistoryEvent
	completed          *historypb.HistoryEvent
	heartbeatScheduled time.Duration
	stickyTimeouts     int // workflow tasks that waited out a sticky queue nobody polled
}

func lastToolAttempt(t *testing.T, dev *testenv.DevServer, id string) toolAttempt {
	t.Helper()
	var got toolAttempt
	scheduled := map[int64]bool{}
	it := dev.Client.GetWorkflowHistory(context.Background(), id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(t, err)
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == protocol.ActivityTool {
			scheduled[ev.GetEventId()] = true
			got.heartbeatScheduled = a.GetHeartbeatTimeout().AsDuration()
		}
		if a := ev.GetActivityTaskStartedEventAttributes(); a != nil && scheduled[a.GetScheduledEventId()] {
			got.started = ev
		}
		if a := ev.GetActivityTaskCompletedEventAttributes(); a != nil && scheduled[a.GetScheduledEventId()] {
			got.completed = ev
		}
		if a := ev.GetWorkflowTaskTimedOutEventAttributes(); a != nil && a.GetTimeoutType() == enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START {
			got.stickyTimeouts++
		}
	}
	require.NotNil(t, got.started, "no tool call in the history of %s", id)
	return got
}

// toolRows are the journal's results of a session's tool calls.
func toolRows(t *testing.T, h *testenv.Home, key string) []chat.Message {
	_, msgs := sessionLines(t, h, key)
	var out []chat.Message
	for _, m := range msgs {
		if m.Role == chat.RoleTool {
			out = append(out, m)
		}
	}
	return out
}

func runsOf(t *testing.T, h *testenv.Home, session string) int {
	data, err := os.ReadFile(filepath.Join(h.Workspace, session+".runs"))
	require.NoError(t, err)
	return strings.Count(string(data), "\n")
}

// TestHostLossResumesWithinTheHeartbeatTimeout: a gateway SIGKILLed mid
// exec, on the product's settings, is replaced by one on another host, which
// cannot tell the dead process is gone. The call's next attempt starts
// within the heartbeat timeout (plus the slack of a retry at once) of the
// dead attempt's last beat, and reports the command's outcome as unknown:
// it ran once.
func TestHostLossResumesWithinTheHeartbeatTimeout(t *testing.T) {
	dev, home := execHome(t, "echo run >> %[1]s.runs; touch %[1]s.started; sleep 60")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	gw, out, _ := startGateway(t, dev, home.Env(dev.Addr, workers.WorkerHostEnv+"=host-a"))
	id := runTurn(ctx, t, dev, "lost")
	marker := filepath.Join(home.Workspace, "lost.started")
	require.Eventually(t, func() bool { _, err := os.Stat(marker); return err == nil }, time.Minute, 20*time.Millisecond,
		"the exec never started:\n%s", out)
	require.NoError(t, gw.Process.Signal(syscall.SIGKILL))
	_, _ = gw.Process.Wait()

	// The dead attempt's last sign of life, as the server saw it.
	desc, err := dev.Client.DescribeWorkflowExecution(ctx, id, "")
	require.NoError(t, err)
	var lastSeen time.Time
	for _, a := range desc.GetPendingActivities() {
		if a.GetActivityType().GetName() == protocol.ActivityTool {
			lastSeen = a.GetLastStartedTime().AsTime()
			if hb := a.GetLastHeartbeatTime(); hb != nil && hb.AsTime().After(lastSeen) {
				lastSeen = hb.AsTime()
			}
		}
	}
	require.False(t, lastSeen.IsZero(), "the tool call is not running: %v", desc.GetPendingActivities())
	require.Equal(t, 4*time.Second, desc.GetExecutionConfig().GetDefaultWorkflowTaskTimeout().AsDuration(),
		"a workflow task held by a lost worker waits this long (temporal-dev's history.defaultWorkflowTaskTimeout, deploy/temporal-dynamicconfig.yaml)")

	startGateway(t, dev, home.Env(dev.Addr, workers.WorkerHostEnv+"=host-b"))
	var res protocol.TurnResult
	require.NoError(t, dev.Client.GetWorkflow(ctx, id, "").Get(ctx, &res))
	require.Equal(t, protocol.StopCompleted, res.StopReason)

	got := lastToolAttempt(t, dev, id)
	require.Equal(t, protocol.HeartbeatTimeout, got.heartbeatScheduled)
	started := got.started.GetActivityTaskStartedEventAttributes()
	require.EqualValues(t, 2, started.GetAttempt())
	require.Equal(t, enumspb.TIMEOUT_TYPE_HEARTBEAT, started.GetLastFailure().GetTimeoutFailureInfo().GetTimeoutType(),
		"last failure: %v", started.GetLastFailure())
	gap := got.started.GetEventTime().AsTime().Sub(lastSeen)
	t.Logf("the next attempt started %s after the dead one's last beat", gap.Round(time.Millisecond))
	require.LessOrEqual(t, gap, protocol.HeartbeatTimeout+hostLossSlack, "server times: last beat %s, next attempt %s", lastSeen, got.started.GetEventTime().AsTime())

	require.Zero(t, got.stickyTimeouts, "the retried call sent the next workflow task past the dead worker's sticky queue")

	rows := toolRows(t, home, "cli:lost")
	require.Len(t, rows, 1)
	require.Equal(t, activities.OutcomeUnknown, rows[0].Content, "the claim stands: the command is not run again")
	require.Equal(t, 1, runsOf(t, home, "lost"))
}

// TestLongExecOnAHealthyWorkerIsNotRetried: a command that runs for three
// heartbeat timeouts and more finishes in its first attempt: the worker
// beats while it runs.
func TestLongExecOnAHealthyWorkerIsNotRetried(t *testing.T) {
	dev, home := execHome(t, "echo run >> %s.runs; sleep 10; echo finished")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	startGateway(t, dev, home.Env(dev.Addr))
	id := runTurn(ctx, t, dev, "long")
	var res protocol.TurnResult
	require.NoError(t, dev.Client.GetWorkflow(ctx, id, "").Get(ctx, &res))
	require.Equal(t, protocol.StopCompleted, res.StopReason)

	got := lastToolAttempt(t, dev, id)
	require.Equal(t, protocol.HeartbeatTimeout, got.heartbeatScheduled)
	require.EqualValues(t, 1, got.started.GetActivityTaskStartedEventAttributes().GetAttempt(), "the call was retried")
	require.NotNil(t, got.completed)
	ran := got.completed.GetEventTime().AsTime().Sub(got.started.GetEventTime().AsTime())
	require.Greater(t, ran, 3*protocol.HeartbeatTimeout, "the call must outlast its heartbeat timeout for the test to mean anything")
	rows := toolRows(t, home, "cli:long")
	require.Len(t, rows, 1)
	require.Contains(t, rows[0].Content, "finished")
	require.Equal(t, 1, runsOf(t, home, "long"))
}
