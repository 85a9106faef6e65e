package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/protocol"
)

// phaseTimes gathers, per named span of a run's history, the times of many runs.
type phaseTimes struct {
	spans map[string][]time.Duration
	order []string
}

func (p *phaseTimes) add(name string, d time.Duration) {
	if p.spans == nil {
		p.spans = map[string][]time.Duration{}
	}
	if _, ok := p.spans[name]; !ok {
		p.order = append(p.order, name)
	}
	p.spans[name] = append(p.spans[name], d)
}

// median of a span; -1 when the runs had none.
func (p *phaseTimes) median(name string) time.Duration {
	if len(p.spans[name]) == 0 {
		return -1
	}
	return percentile(p.spans[name], .5)
}

// totalSpan is a run's time from publish to the client seeing it close.
const totalSpan = "total: publish to the client seeing the close"

// record splits one run by its history's event times: the client's start, the server's
// dispatch, the worker's workflow tasks (local activities inside) and the activities.
func (p *phaseTimes) record(t *testing.T, ctx context.Context, c client.Client, run client.WorkflowRun, start, seen time.Time) {
	var events []*historypb.HistoryEvent
	it := c.GetWorkflowHistory(ctx, run.GetID(), run.GetRunID(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(t, err)
		events = append(events, ev)
	}
	p.add(totalSpan, seen.Sub(start))
	p.add("publish to WorkflowExecutionStarted (client → server)", events[0].GetEventTime().AsTime().Sub(start))
	wft, activities := 0, 0
	for k := 1; k < len(events); k++ {
		prev, ev := events[k-1], events[k]
		d := ev.GetEventTime().AsTime().Sub(prev.GetEventTime().AsTime())
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED:
			p.add("workflow task scheduled → started (server dispatch), each", d)
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
			wft++
			p.add(fmt.Sprintf("workflow task %d started → completed (worker, local activities inside; and the server's write)", wft), d)
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED:
			p.add("activity scheduled → started (eager dispatch)", d)
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
			activities++
			p.add(fmt.Sprintf("activity %d started → completed", activities), d)
		}
	}
	last := events[len(events)-1].GetEventTime().AsTime()
	p.add("history span, first event to last", last.Sub(events[0].GetEventTime().AsTime()))
	p.add("close event to the client seeing it (long poll)", seen.Sub(last))
	p.add("events in the history (count)", time.Duration(len(events))*time.Millisecond)
}

// b1PhaseRows splits eager B1 turns and Temporal's floor for their shape (floorTurn, same
// server, same process) by their histories' event times, phase beside phase, the median of
// 30 runs each after a warm-up, a turn and a floor run in alternation so load falls on both
// alike: the note's profile of where B1's p50 goes. It also returns both totals' medians.
func (b *benchEnv) b1PhaseRows(ctx context.Context) (rows []benchRow, turnP50, floorP50 time.Duration) {
	t := b.t
	defer b.localWorkers()()
	bus := &channels.Bus{Client: b.dev.Client, Settings: b.set, LocalWorker: true}
	w := worker.New(b.dev.Client, floorQueue, worker.Options{})
	w.RegisterWorkflow(floorTurn)
	w.RegisterActivity(floorStep)
	require.NoError(t, w.Start())
	defer w.Stop()
	var turn, floor phaseTimes
	for i := 0; i < 31; i++ {
		chatID := fmt.Sprintf("b1p-%d", i%4)
		msg := protocol.Inbound{ID: b.id("m"), SessionKey: "cli:" + chatID, Route: protocol.Route{Channel: "cli", ChatID: chatID}, Content: benchMessage(nil, false, 0), SentAt: time.Now()}
		start := time.Now()
		_, err := bus.Publish(ctx, msg)
		require.NoError(t, err)
		run := b.dev.Client.GetWorkflow(ctx, protocol.TurnWorkflowID("cli:"+chatID), "")
		require.NoError(t, run.Get(ctx, nil))
		if i > 0 {
			turn.record(t, ctx, b.dev.Client, run, start, time.Now())
		}
		start = time.Now()
		frun, err := b.dev.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: b.id("floor-"), TaskQueue: floorQueue, EnableEagerStart: true}, floorTurn)
		require.NoError(t, err)
		require.NoError(t, frun.Get(ctx, nil))
		if i > 0 {
			floor.record(t, ctx, b.dev.Client, frun, start, time.Now())
		}
	}
	show := func(d time.Duration, count bool) string {
		switch {
		case d < 0:
			return "-"
		case count:
			return fmt.Sprint(d.Milliseconds())
		}
		return ms(d)
	}
	for _, name := range turn.order {
		count := strings.HasSuffix(name, "(count)")
		d, f := turn.median(name), floor.median(name)
		r := "-"
		if !count && f > 0 {
			r = ratio(d.Seconds(), f.Seconds())
		}
		rows = append(rows, benchRow{"B1·", "eager B1 turn, " + name + " (baseline column: Temporal's floor, the same shape with empty activities)",
			show(d, count), show(f, count), r, "", ""})
	}
	return rows, turn.median(totalSpan), floor.median(totalSpan)
}

// floorQueue is the task queue of the floor workflow: a worker of its own in this process.
const floorQueue = "bench-floor"

// floorTurn is B1's shape with nothing in it: RESTORE, COMPACT, COMMAND, BUILD and
// TRANSCRIBE as local activities, the model call as an activity, SAVE, MEASURE and RESPOND local.
func floorTurn(ctx workflow.Context) error {
	local := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{StartToCloseTimeout: 10 * time.Second})
	for i := 0; i < 5; i++ {
		if err := workflow.ExecuteLocalActivity(local, floorStep, i).Get(ctx, nil); err != nil {
			return err
		}
	}
	remote := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	if err := workflow.ExecuteActivity(remote, floorStep, 5).Get(ctx, nil); err != nil {
		return err
	}
	for i := 6; i < 9; i++ {
		if err := workflow.ExecuteLocalActivity(local, floorStep, i).Get(ctx, nil); err != nil {
			return err
		}
	}
	return nil
}

// floorStep is an activity that does nothing.
func floorStep(context.Context, int) (int, error) { return 0, nil }
