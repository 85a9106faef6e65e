package integration

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/interceptor"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
	"github.com/nanobot-durable/nanobot/workers"
)

// busCalls watches the bus's calls at the client's edge: how many starts
// and signals it made and how they ended; beforeSignal, when set, runs
// before a signal goes out.
type busCalls struct {
	interceptor.ClientInterceptorBase
	starts, started, signals, closed atomic.Int32
	beforeSignal                     func()
}

type busCallsOutbound struct {
	interceptor.ClientOutboundInterceptorBase
	c *busCalls
}

func (c *busCalls) InterceptClient(next interceptor.ClientOutboundInterceptor) interceptor.ClientOutboundInterceptor {
	return &busCallsOutbound{ClientOutboundInterceptorBase: interceptor.ClientOutboundInterceptorBase{Next: next}, c: c}
}

func (o *busCallsOutbound) ExecuteWorkflow(ctx context.Context, in *interceptor.ClientExecuteWorkflowInput) (client.WorkflowRun, error) {
	run, err := o.Next.ExecuteWorkflow(ctx, in)
	if in.WorkflowType != protocol.TurnWorkflowName { // the workers' own starts share the client
		return run, err
	}
	o.c.starts.Add(1)
	if err == nil {
		o.c.started.Add(1)
	}
	return run, err
}

func (o *busCallsOutbound) SignalWorkflow(ctx context.Context, in *interceptor.ClientSignalWorkflowInput) error {
	if in.SignalName != protocol.SignalInbound {
		return o.Next.SignalWorkflow(ctx, in)
	}
	o.c.signals.Add(1)
	if f := o.c.beforeSignal; f != nil {
		f()
	}
	err := o.Next.SignalWorkflow(ctx, in)
	var notFound *serviceerror.NotFound
	if errors.As(err, &notFound) {
		o.c.closed.Add(1)
	}
	return err
}

// eagerRig is a process that publishes and runs the turn worker on one
// client, as the gateway does: the bus starts turns eagerly.
func eagerRig(t *testing.T, model *modeltest.Server, calls *busCalls) (*testenv.DevServer, *testenv.Home, *channels.Bus) {
	t.Helper()
	dev := testenv.StartDevServer(t)
	home := testenv.NewHome(t, model.URL(), nil)
	cfg, _, err := config.Load(home.ConfigPath)
	require.NoError(t, err)
	c, err := client.Dial(client.Options{HostPort: dev.Addr, Interceptors: []interceptor.ClientInterceptor{calls},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	set, err := workers.Start(c, workers.Options{Config: cfg, Turns: true, Models: true, Workspace: true, Log: quiet})
	require.NoError(t, err)
	t.Cleanup(set.Stop)
	require.True(t, channels.EagerTurns(), "%s is set in the environment", channels.EagerTurnsEnv)
	bus := &channels.Bus{Client: c, Settings: testenv.Settings(protocol.Settings{Model: "test-model"}), LocalWorker: true}
	return dev, home, bus
}

// turnRuns lists the closed runs of one workflow ID by how they closed,
// with the message IDs each completed run answered.
func turnRuns(ctx context.Context, c client.Client, id string) (answered map[string]int, statuses map[enumspb.WorkflowExecutionStatus]int, err error) {
	answered, statuses = map[string]int{}, map[enumspb.WorkflowExecutionStatus]int{}
	var token []byte
	for {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query: fmt.Sprintf("WorkflowId = '%s' AND ExecutionStatus != 'Running'", id), NextPageToken: token})
		if err != nil {
			return nil, nil, err
		}
		for _, e := range resp.GetExecutions() {
			statuses[e.GetStatus()]++
			if e.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
				continue
			}
			var res protocol.TurnResult
			if err := c.GetWorkflow(ctx, id, e.GetExecution().GetRunId()).Get(ctx, &res); err != nil {
				return nil, nil, err
			}
			for _, m := range res.MessageIDs {
				answered[m]++
			}
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			return answered, statuses, nil
		}
	}
}

// waitIdle waits until the workflow has no running run (or ctx ends).
func waitIdle(ctx context.Context, c client.Client, id string) {
	for ctx.Err() == nil {
		desc, err := c.DescribeWorkflowExecution(ctx, id, "")
		if err == nil && desc.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestConcurrentSendersEachMessageSeenByExactlyOneRun has 4 senders
// publish to one session at once while its runs complete and continue as
// new: every message must be answered by exactly one run, none lost.
func TestConcurrentSendersEachMessageSeenByExactlyOneRun(t *testing.T) {
	model := modeltest.New().Handle(func(*modeltest.RecordedRequest) modeltest.Step {
		return modeltest.Text("ok").Delay(time.Duration(rand.IntN(20)) * time.Millisecond)
	})
	defer model.Close()
	calls := &busCalls{}
	dev, home, bus := eagerRig(t, model, calls)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	const senders, each = 4, 40
	// Answers are counted where they land: a run that continued as new has no result of its own.
	ch := startRecordingChannel(t, dev.Client, "race-replies")
	route := protocol.Route{Channel: "cli", ChatID: "race", Queue: "race-replies"}
	var wg sync.WaitGroup
	errs := make(chan error, senders*each)
	for s := range senders {
		wg.Go(func() {
			for i := range each {
				id := fmt.Sprintf("s%d-m%d", s, i)
				if _, err := bus.Publish(ctx, protocol.Inbound{ID: id, SessionKey: protocol.SessionKey(route.Channel, route.ChatID), Route: route, Content: "<" + id + ">", SentAt: time.Now()}); err != nil {
					errs <- fmt.Errorf("%s: %w", id, err)
				}
				time.Sleep(time.Duration(rand.IntN(15)) * time.Millisecond)
				if i%10 == 9 { // every tenth message, let the session go idle so its run completes and the next starts
					waitIdle(ctx, dev.Client, protocol.TurnWorkflowID("cli:race"))
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}

	id := protocol.TurnWorkflowID("cli:race")
	require.Eventually(t, func() bool {
		return len(ch.answered()) >= senders*each && dev.Client.GetWorkflow(ctx, id, "").Get(ctx, nil) == nil
	}, 3*time.Minute, 100*time.Millisecond, "not every message answered: %d of %d", len(ch.answered()), senders*each)
	answered := ch.answered()
	_, statuses, err := turnRuns(ctx, dev.Client, id)
	require.NoError(t, err)

	var lost, twice []string
	for s := range senders {
		for i := range each {
			switch m := fmt.Sprintf("s%d-m%d", s, i); answered[m] {
			case 0:
				lost = append(lost, m)
			case 1:
			default:
				twice = append(twice, m)
			}
		}
	}
	require.Empty(t, lost, "messages no run answered")
	require.Empty(t, twice, "messages answered by more than one run")
	require.Len(t, answered, senders*each, "answers for messages never sent")

	_, msgs := sessionLines(t, home, "cli:race")
	journaled := map[string]int{}
	for _, m := range msgs {
		if m.Role == "user" {
			for _, f := range strings.Fields(m.Content) {
				if strings.HasPrefix(f, "<s") && strings.HasSuffix(f, ">") {
					journaled[strings.Trim(f, "<>")]++
				}
			}
		}
	}
	for m := range answered {
		require.Equal(t, 1, journaled[m], "journal rows of %s", m)
	}
	// The race was real: runs completed, others continued as new with
	// carried messages, and the bus both started runs and joined them.
	t.Logf("runs: %v; bus: %d starts (%d started), %d signals (%d to a closed run)",
		statuses, calls.starts.Load(), calls.started.Load(), calls.signals.Load(), calls.closed.Load())
	require.Greater(t, statuses[enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED], 1)
	require.Positive(t, statuses[enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW])
	require.Greater(t, calls.started.Load(), int32(1))
	require.Positive(t, calls.signals.Load())
}

// TestMessageForATurnThatClosedMeanwhileStartsTheNext: a message whose
// start finds a run, and whose signal then finds that run closed, starts
// the next run with itself as the input.
func TestMessageForATurnThatClosedMeanwhileStartsTheNext(t *testing.T) {
	model := modeltest.New(modeltest.Block().Text("one"), modeltest.Text("two"))
	defer model.Close()
	calls := &busCalls{}
	dev, home, bus := eagerRig(t, model, calls)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	route := protocol.Route{Channel: "cli", ChatID: "meanwhile"}
	id := protocol.TurnWorkflowID("cli:meanwhile")

	_, err := bus.Publish(ctx, protocol.Inbound{ID: "m1", SessionKey: protocol.SessionKey(route.Channel, route.ChatID), Route: route, Content: "first", SentAt: time.Now()})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return model.Waiting() == 1 }, time.Minute, 10*time.Millisecond)
	desc, err := dev.Client.DescribeWorkflowExecution(ctx, id, "")
	require.NoError(t, err)
	first := desc.GetWorkflowExecutionInfo().GetExecution().GetRunId()

	// m2's start finds the first run; before its signal leaves, that run ends.
	calls.beforeSignal = func() {
		model.Release()
		var res protocol.TurnResult
		require.NoError(t, dev.Client.GetWorkflow(ctx, id, first).Get(ctx, &res))
		require.Equal(t, []string{"m1"}, res.MessageIDs)
	}
	_, err = bus.Publish(ctx, protocol.Inbound{ID: "m2", SessionKey: protocol.SessionKey(route.Channel, route.ChatID), Route: route, Content: "second", SentAt: time.Now()})
	require.NoError(t, err)
	require.EqualValues(t, 1, calls.signals.Load())
	require.EqualValues(t, 1, calls.closed.Load(), "the signal found the run closed")
	require.EqualValues(t, 2, calls.started.Load(), "the bus started a second run")

	var res protocol.TurnResult
	run := dev.Client.GetWorkflow(ctx, id, "")
	require.NoError(t, run.Get(ctx, &res))
	require.NotEqual(t, first, run.GetRunID())
	require.Equal(t, []string{"m2"}, res.MessageIDs)
	require.Equal(t, "two", res.ReplyPreview)

	// The second run got the message as its input, not as a signal.
	hist := dev.Client.GetWorkflowHistory(ctx, id, run.GetRunID(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	ev, err := hist.Next()
	require.NoError(t, err)
	var in protocol.TurnInput
	require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(ev.GetWorkflowExecutionStartedEventAttributes().GetInput(), &in))
	require.Len(t, in.Carry, 1)
	require.Equal(t, "m2", in.Carry[0].ID)

	_, msgs := sessionLines(t, home, "cli:meanwhile")
	var users []string
	for _, m := range msgs {
		if m.Role == "user" {
			users = append(users, m.Content)
		}
	}
	require.Len(t, users, 2)
	require.Contains(t, users[0], "first")
	require.Contains(t, users[1], "second")
}
