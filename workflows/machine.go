package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/nanobot-durable/nanobot/protocol"
)

// State is a stage of a turn.
type State string

// Event is what a state handler reports; the table maps (state, event) to the next state.
type Event string

// Transition is one row of a state table.
type Transition struct {
	From State
	On   Event
	To   State
}

// handler runs one state and returns the event it ended with.
type handler func(ctx workflow.Context) (Event, error)

// machine runs a table-driven state machine and keeps a trace of it.
type machine struct {
	table    []Transition
	handlers map[State]handler
	current  State
	trace    []protocol.TraceEntry
	// note, when set, adds to each state's details (the last model call's outcome).
	note func() string
}

// ErrNoTransition marks a (state, event) pair the table does not know.
const ErrNoTransition = "NoTransition"

func (m *machine) next(from State, on Event) (State, bool) {
	for _, t := range m.table {
		if t.From == from && t.On == on {
			return t.To, true
		}
	}
	return "", false
}

// run walks the table from start until the final state.
func (m *machine) run(ctx workflow.Context, start, final State) error {
	m.current = start
	for m.current != final {
		h, ok := m.handlers[m.current]
		if !ok {
			return temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("state %s has no handler", m.current), ErrNoTransition, nil)
		}
		began := workflow.Now(ctx)
		details := "state " + string(m.current)
		if m.note != nil {
			if n := m.note(); n != "" {
				details += " · " + n
			}
		}
		workflow.SetCurrentDetails(ctx, details)
		ev, err := h(ctx)
		entry := protocol.TraceEntry{
			State: string(m.current), Start: began,
			DurationMS: workflow.Now(ctx).Sub(began).Milliseconds(), Event: string(ev),
		}
		if err != nil {
			entry.Error = err.Error()
			m.trace = append(m.trace, entry)
			return err
		}
		m.trace = append(m.trace, entry)
		to, ok := m.next(m.current, ev)
		if !ok {
			return temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("no transition from state %s on event %q", m.current, ev), ErrNoTransition, nil)
		}
		workflow.GetLogger(ctx).Debug("turn state done", "state", m.current, "event", ev, "next", to)
		m.current = to
	}
	return nil
}

// instanceOf is the nanobot instance this run belongs to, read from its own
// task queue (fixed for the run), so replays name the same queues and IDs.
func instanceOf(ctx workflow.Context) protocol.Instance {
	return protocol.InstanceOfQueue(workflow.GetInfo(ctx).TaskQueueName)
}

// workspaceQueue is where a turn's tools run: the workspace host's queue
// when the turn's settings name one, else the turn's own (eager dispatch).
func workspaceQueue(ctx workflow.Context, s protocol.Settings) string {
	if s.WorkspaceQueue != "" {
		return s.WorkspaceQueue
	}
	return instanceOf(ctx).TaskQueue()
}

// onWorkspace runs a step that reads the workspace (the prompt files): a
// local activity on the turn's worker, or, when the settings name a
// workspace queue, an activity there that waits for the workspace host.
func onWorkspace(ctx workflow.Context, s protocol.Settings, summary, name string, in any) workflow.Future {
	if s.WorkspaceQueue == "" {
		return workflow.ExecuteLocalActivity(localCtx(ctx, summary), name, in)
	}
	return workflow.ExecuteActivity(workspaceCtx(ctx, summary), name, in)
}

// workspaceCtx is an activity on the instance's workspace queue; it waits
// there, unbounded, while the workspace host is away.
func workspaceCtx(ctx workflow.Context, summary string) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue: instanceOf(ctx).WorkspaceQueue(), StartToCloseTimeout: 2 * time.Minute, HeartbeatTimeout: protocol.HeartbeatTimeout,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumAttempts: 5},
		Summary:     summary,
	})
}
