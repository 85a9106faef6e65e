// Package workflows holds the durable turn: pure decision code that calls
// activities for every effect. Nothing here does I/O.
package workflows

import (
	"errors"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/protocol"
)

// The states of a turn, as in nanobot's agent loop.
const (
	Restore State = "RESTORE"
	Compact State = "COMPACT"
	Command State = "COMMAND"
	Build   State = "BUILD"
	Run     State = "RUN"
	Save    State = "SAVE"
	Respond State = "RESPOND"
	Done    State = "DONE"
)

// Events the state handlers report.
const (
	EvOK       Event = "ok"
	EvDispatch Event = "dispatch"
	EvShortcut Event = "shortcut"
)

// TurnTable is the whole control flow of a turn: a pair missing here fails the turn.
var TurnTable = []Transition{
	{Restore, EvOK, Compact},
	{Compact, EvOK, Command},
	{Command, EvDispatch, Build},
	{Command, EvShortcut, Done},
	{Build, EvOK, Run},
	{Run, EvOK, Save},
	{Save, EvOK, Respond},
	{Respond, EvOK, Done},
}

// waitForFirstMessage bounds how long a run started without a message lives.
const waitForFirstMessage = time.Minute

// turn is the state of one run of TurnWorkflow.
type turn struct {
	in       protocol.TurnInput
	id       string
	msg      protocol.Inbound
	answered []string
	pending  []protocol.Inbound
	inbound  workflow.ReceiveChannel
	started  time.Time
	m        machine
	run      runner
	final    reply
}

// reply is what the turn will say and why it stopped.
type reply struct {
	Text       string // set when short or not journaled (errors)
	EntryID    string // the journaled assistant message holding the reply
	StopReason string
}

// TurnWorkflow runs one turn of a session: one user message in, one reply out.
func TurnWorkflow(ctx workflow.Context, in protocol.TurnInput) (*protocol.TurnResult, error) {
	in.Settings = in.Settings.WithDefaults()
	t := &turn{
		in:      in,
		id:      workflow.GetInfo(ctx).WorkflowExecution.RunID,
		inbound: workflow.GetSignalChannel(ctx, protocol.SignalInbound),
		pending: append([]protocol.Inbound(nil), in.Carry...),
		started: workflow.Now(ctx),
	}
	t.run = runner{t: t}
	t.m = machine{table: TurnTable, handlers: map[State]handler{
		Restore: t.restore, Compact: t.compact, Command: t.command,
		Build: t.build, Run: t.run.execute, Save: t.save, Respond: t.respond,
	}}
	if err := workflow.SetQueryHandler(ctx, protocol.QueryState, t.state); err != nil {
		return nil, err
	}
	if !t.takeFirstMessage(ctx) {
		return &protocol.TurnResult{SessionKey: in.SessionKey, StopReason: "no_message"}, nil
	}
	workflow.SetCurrentDetails(ctx, "message: "+chat.Preview(t.msg.Content, 120))
	if err := t.m.run(ctx, Restore, Done); err != nil {
		return nil, err
	}
	return t.finish(ctx)
}

// takeFirstMessage picks the message this run answers; the rest wait for injection.
func (t *turn) takeFirstMessage(ctx workflow.Context) bool {
	t.drainSignals()
	if len(t.pending) == 0 {
		var msg protocol.Inbound
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(t.inbound, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, &msg); t.pending = append(t.pending, msg) })
		sel.AddFuture(workflow.NewTimer(ctx, waitForFirstMessage), func(workflow.Future) {})
		sel.Select(ctx)
		t.drainSignals()
	}
	if len(t.pending) == 0 {
		return false
	}
	t.msg, t.pending = t.pending[0], t.pending[1:]
	t.answered = append(t.answered, t.msg.ID)
	return true
}

// drainSignals moves every delivered signal into pending, without blocking.
func (t *turn) drainSignals() {
	for {
		var msg protocol.Inbound
		if !t.inbound.ReceiveAsync(&msg) {
			return
		}
		t.pending = append(t.pending, msg)
	}
}

// finish hands unread messages to the next run: a run never ends with unread signals.
func (t *turn) finish(ctx workflow.Context) (*protocol.TurnResult, error) {
	t.drainSignals()
	if len(t.pending) > 0 {
		next := protocol.TurnInput{SessionKey: t.in.SessionKey, Settings: t.in.Settings, Carry: t.pending}
		return nil, workflow.NewContinueAsNewError(ctx, protocol.TurnWorkflowName, next)
	}
	return &protocol.TurnResult{
		SessionKey: t.in.SessionKey, MessageIDs: t.answered,
		ReplyPreview: chat.Preview(t.final.Text, protocol.PreviewBytes), StopReason: t.final.StopReason,
		Iterations: t.run.iteration, Trace: t.m.trace,
	}, nil
}

func (t *turn) state() (protocol.TurnState, error) {
	return protocol.TurnState{
		SessionKey: t.in.SessionKey, State: string(t.m.current),
		Iteration: t.run.iteration, Trace: t.m.trace,
	}, nil
}

func (t *turn) step() protocol.StepInput {
	return protocol.StepInput{SessionKey: t.in.SessionKey, Turn: t.id, Message: t.msg, Settings: t.in.Settings}
}

func (t *turn) restore(ctx workflow.Context) (Event, error) {
	var res protocol.RestoreResult
	err := workflow.ExecuteLocalActivity(localCtx(ctx, "restore"), protocol.ActivityRestore, t.step()).Get(ctx, &res)
	return EvOK, err
}

func (t *turn) compact(ctx workflow.Context) (Event, error) {
	var res protocol.CompactResult
	err := workflow.ExecuteLocalActivity(localCtx(ctx, "compact"), protocol.ActivityCompact, t.step()).Get(ctx, &res)
	return EvOK, err
}

func (t *turn) command(ctx workflow.Context) (Event, error) {
	var res protocol.CommandResult
	if err := workflow.ExecuteLocalActivity(localCtx(ctx, "command"), protocol.ActivityCommand, t.step()).Get(ctx, &res); err != nil {
		return "", err
	}
	if !res.Handled {
		return EvDispatch, nil
	}
	t.final = reply{Text: res.Reply, StopReason: protocol.StopCommand}
	t.deliver(ctx)
	return EvShortcut, nil
}

func (t *turn) build(ctx workflow.Context) (Event, error) {
	var res protocol.BuildResult
	err := workflow.ExecuteLocalActivity(localCtx(ctx, "build"), protocol.ActivityBuild, t.step()).Get(ctx, &res)
	return EvOK, err
}

func (t *turn) save(ctx workflow.Context) (Event, error) {
	in := protocol.SaveInput{
		StepInput: t.step(), StopReason: t.final.StopReason, FinalEntry: t.final.EntryID,
		LatencyMS: workflow.Now(ctx).Sub(t.started).Milliseconds(), Reply: t.final.Text,
	}
	// Errors are shown to the user but only a placeholder enters history.
	err := workflow.ExecuteLocalActivity(localCtx(ctx, "save"), protocol.ActivitySave, in).Get(ctx, nil)
	return EvOK, err
}

func (t *turn) respond(ctx workflow.Context) (Event, error) {
	t.deliver(ctx)
	return EvOK, nil
}

// deliver sends the reply to the channel's process; a failed delivery is
// logged, not fatal: the reply is already in the journal.
func (t *turn) deliver(ctx workflow.Context) {
	if t.msg.ReplyQueue == "" {
		return
	}
	in := protocol.DeliverInput{
		SessionKey: t.in.SessionKey, Turn: t.id, Channel: t.msg.Channel, ChatID: t.msg.ChatID,
		MessageIDs: t.answered, Text: t.final.Text, EntryID: t.final.EntryID, StopReason: t.final.StopReason,
	}
	if err := workflow.ExecuteActivity(deliverCtx(ctx, t.msg.ReplyQueue, t.msg.Channel), protocol.ActivityDeliver, in).Get(ctx, nil); err != nil {
		workflow.GetLogger(ctx).Error("delivery failed", "session", t.in.SessionKey, "error", err)
	}
}

func localCtx(ctx workflow.Context, summary string) workflow.Context {
	return workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: 200 * time.Millisecond, MaximumAttempts: 5},
		Summary:             summary,
	})
}

func deliverCtx(ctx workflow.Context, queue, channel string) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:              queue,
		ScheduleToStartTimeout: time.Minute,
		StartToCloseTimeout:    time.Minute,
		RetryPolicy:            &temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 4},
		Summary:                "deliver to " + channel,
	})
}

// isCanceled tells a /stop or termination apart from a failure.
func isCanceled(err error) bool {
	var ce *temporal.CanceledError
	return errors.As(err, &ce)
}
