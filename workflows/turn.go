// Package workflows holds the durable turn: pure decision code that calls
// activities for every effect. Nothing here does I/O.
package workflows

import (
	"errors"
	"fmt"
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
	in        protocol.TurnInput
	id        string
	msg       protocol.Inbound
	answered  []protocol.Inbound
	delivered int // answered[:delivered] already got a reply
	pending   []protocol.Inbound
	taking    []string // IDs of the waiting messages being journaled into the turn: no longer withdrawable
	inbound   workflow.ReceiveChannel
	started   time.Time
	inflight  int  // inline commands still running
	busy      bool // past COMMAND: slash commands run inline
	m         machine
	run       runner
	mem       memoryState
	profile   protocol.Profile // the turn's rules on tools, fixed at COMMAND
}

// reply is what the turn will say and why it stopped.
type reply struct {
	Text       string // set when short or not journaled (errors)
	EntryID    string // the journaled assistant message holding the reply
	StopReason string
	Drawn      string // the message the answer was streamed into, in the origin's chat
}

// TurnWorkflow runs one turn of a session: one user message in, one reply out.
func TurnWorkflow(ctx workflow.Context, in protocol.TurnInput) (*protocol.TurnResult, error) {
	t := &turn{
		in:      in,
		id:      workflow.GetInfo(ctx).WorkflowExecution.RunID,
		inbound: workflow.GetSignalChannel(ctx, protocol.SignalInbound),
		pending: append([]protocol.Inbound(nil), in.Carry...),
		started: workflow.Now(ctx),
	}
	t.run = runner{host: t}
	t.m = machine{table: TurnTable, handlers: map[State]handler{
		Restore: t.restore, Compact: t.compact, Command: t.command,
		Build: t.build, Run: t.run.execute, Save: t.save, Respond: t.respond,
	}, note: func() string { return t.run.lastCall }}
	if err := workflow.SetQueryHandler(ctx, protocol.QueryState, t.state); err != nil {
		return nil, err
	}
	if err := t.setWithdrawHandler(ctx); err != nil {
		return nil, err
	}
	start := Restore
	if r := in.Resume; r != nil {
		t.id, t.msg, t.answered, t.delivered, t.started = r.Turn, r.Message, r.Answered, r.Delivered, r.Started
		t.run.RunnerState, t.m.trace, t.busy, start = r.Runner, r.Trace, true, Run
		t.run.originAnswered, t.profile = r.OriginAnswered, r.Profile
	} else if !t.takeFirstMessage(ctx) {
		return &protocol.TurnResult{SessionKey: in.SessionKey, StopReason: "no_message"}, nil
	}
	upgradeStep(ctx)
	workflow.Go(ctx, t.receive)
	workflow.SetCurrentDetails(ctx, "message: "+chat.Preview(t.msg.Content, 120))
	if err := t.m.run(ctx, start, Done); err != nil {
		var can *workflow.ContinueAsNewError
		if errors.As(err, &can) {
			return nil, err
		}
		if temporal.IsCanceledError(err) {
			return nil, t.cancelled(ctx, err)
		}
		return nil, t.failed(ctx, err)
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
	t.answered = append(t.answered, t.msg)
	return true
}

// receive takes messages as they arrive: read-only slash commands are
// answered at once (nanobot runs them inline), the rest wait for a drain point.
func (t *turn) receive(ctx workflow.Context) {
	for {
		var msg protocol.Inbound
		// Waiting on the length, not in Receive, leaves a message in the
		// channel until this goroutine runs: a run that ends first drains it.
		if err := workflow.Await(ctx, func() bool { return t.inbound.Len() > 0 }); err != nil {
			return
		}
		for t.inbound.ReceiveAsync(&msg) {
			t.accept(ctx, msg)
		}
	}
}

func (t *turn) accept(ctx workflow.Context, msg protocol.Inbound) {
	if t.busy && isInlineCommand(msg.Content) {
		t.inflight++
		workflow.Go(ctx, func(ctx workflow.Context) {
			defer func() { t.inflight-- }()
			t.inlineCommand(ctx, msg)
		})
		return
	}
	t.pending = append(t.pending, msg)
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
	if err := t.close(ctx); err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(t.answered))
	for _, m := range t.answered {
		ids = append(ids, m.ID)
	}
	return &protocol.TurnResult{
		SessionKey: t.in.SessionKey, MessageIDs: ids,
		ReplyPreview: chat.Preview(t.run.final.Text, protocol.PreviewBytes), StopReason: t.run.final.StopReason,
		Iterations: t.run.Iteration, Trace: t.m.trace,
	}, nil
}

// close ends a run that got this far: inline commands finish, the memo and
// the count record how it stopped, and unread messages go to the next run.
func (t *turn) close(ctx workflow.Context) error {
	_ = workflow.Await(ctx, func() bool { return t.inflight == 0 })
	t.setMemo(ctx)
	countTurn(ctx, t.run.final.StopReason)
	return t.carryLeftovers(ctx)
}

// countTurn counts a finished turn by how it stopped (not on replay).
func countTurn(ctx workflow.Context, stopReason string) {
	workflow.GetMetricsHandler(ctx).WithTags(map[string]string{"stop_reason": stopReason}).Counter(protocol.MetricTurns).Inc(1)
}

// setMemo shows the turn's outcome in the Web UI's list and `nanobot turn list`.
func (t *turn) setMemo(ctx workflow.Context) {
	model := t.run.lastModel
	if model == "" {
		model = t.in.Settings.Model
	}
	r := t.run.RunnerState
	memo := map[string]any{
		"model": model, "stop_reason": t.run.final.StopReason, "iterations": r.Iteration,
		"prompt_tokens": r.PromptTokens, "completion_tokens": r.CompletionTokens, "cached_tokens": r.CachedTokens,
		"tokens": fmt.Sprintf("%s in / %s out", protocol.CompactTokens(r.PromptTokens), protocol.CompactTokens(r.CompletionTokens)),
	}
	if err := workflow.UpsertMemo(ctx, memo); err != nil {
		workflow.GetLogger(ctx).Warn("setting the turn's memo failed", "error", err)
	}
}

// cancelled saves what the turn did (/stop), in a context the cancellation
// does not reach, and passes unread messages on to the next run.
func (t *turn) cancelled(ctx workflow.Context, cause error) error {
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	in := protocol.SaveInput{StepInput: t.step(), StopReason: protocol.StopCancelled, LatencyMS: workflow.Now(dctx).Sub(t.started).Milliseconds()}
	if err := workflow.ExecuteLocalActivity(localCtx(dctx, "save after stop"), protocol.ActivitySave, in).Get(dctx, nil); err != nil {
		workflow.GetLogger(ctx).Error("saving a stopped turn failed", "session", t.in.SessionKey, "error", err)
	}
	if workflow.GetVersion(dctx, stopEndsExecSessions, workflow.DefaultVersion, 1) == 1 {
		t.endExecSessions(dctx)
	}
	countTurn(dctx, protocol.StopCancelled)
	_ = workflow.Await(dctx, func() bool { return t.inflight == 0 })
	if err := t.carryLeftovers(dctx); err != nil {
		return err
	}
	return cause
}

// stopEndsExecSessions marks runs whose /stop also ends the exec sessions the session started.
const stopEndsExecSessions = "stop-ends-exec-sessions"

// endExecSessions ends the session's exec sessions where the workspace is;
// one left running is logged, and its idle end still comes.
func (t *turn) endExecSessions(ctx workflow.Context) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue: workspaceQueue(ctx, t.in.Settings), StartToCloseTimeout: 30 * time.Second, ScheduleToCloseTimeout: 2 * time.Minute,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 3},
		Summary:     "end exec sessions",
	})
	if err := workflow.ExecuteActivity(actx, protocol.ActivityEndExecSessions, t.step()).Get(ctx, nil); err != nil {
		workflow.GetLogger(ctx).Error("ending a stopped session's exec sessions failed", "session", t.in.SessionKey, "error", err)
	}
}

// carryLeftovers drains the signal channel and, when messages are left,
// returns the continue-as-new that starts the next turn with them.
func (t *turn) carryLeftovers(ctx workflow.Context) error {
	t.drainSignals()
	if len(t.pending) == 0 {
		return nil
	}
	next := protocol.TurnInput{SessionKey: t.in.SessionKey, Settings: t.in.Settings, Carry: t.pending}
	return workflow.NewContinueAsNewError(ctx, protocol.TurnWorkflowName, next)
}

func (t *turn) state() (protocol.TurnState, error) {
	st := protocol.TurnState{
		SessionKey: t.in.SessionKey, State: string(t.m.current),
		Iteration: t.run.Iteration, Trace: t.m.trace, Hints: t.run.hints, Waiting: t.run.waitingFor,
	}
	for _, m := range t.pending { // a query adds nothing to the history: no version marker
		st.Queued = append(st.Queued, protocol.QueuedMessage{ID: m.ID, Preview: chat.Preview(m.Content, queuedPreview)})
	}
	return st, nil
}

// queuedPreview bounds a queued message's text in the state query.
const queuedPreview = 120

func (t *turn) step() protocol.StepInput {
	return protocol.StepInput{SessionKey: t.in.SessionKey, Turn: t.id, Message: t.msg, Settings: t.in.Settings}
}

// The turn is the runner's host: its inbox is the session's signal channel.

func (t *turn) loopConfig() loopConfig {
	return loopConfig{SessionKey: t.in.SessionKey, OriginKey: t.in.SessionKey, Turn: t.id, Route: t.msg.Route, Settings: t.in.Settings, Profile: t.profile}
}

func (t *turn) waiting() int { return len(t.pending) }

// injectWaiting journals up to max waiting messages as one user message.
func (t *turn) injectWaiting(ctx workflow.Context, cycle, max int) bool {
	n := min(len(t.pending), max)
	if n == 0 {
		return false // every waiting message was withdrawn
	}
	batch := t.pending[:n] // taking guards it: a withdraw meanwhile removes only messages behind it
	for _, m := range batch {
		t.taking = append(t.taking, m.ID)
	}
	defer func() { t.taking = nil }()
	in := protocol.InjectInput{SessionKey: t.in.SessionKey, Turn: t.id, Cycle: cycle, Messages: batch}
	summary := fmt.Sprintf("inject %d message(s)", n)
	if err := workflow.ExecuteLocalActivity(localCtx(ctx, summary), protocol.ActivityInject, in).Get(ctx, nil); err != nil {
		workflow.GetLogger(ctx).Error("injecting messages failed; they start the next turn", "error", err)
		return false
	}
	t.answered = append(t.answered, batch...)
	t.pending = t.pending[n:]
	return true
}

// onAnswer delivers an answer before the injected messages are taken up.
func (t *turn) onAnswer(ctx workflow.Context) { t.deliver(ctx) }

// progress shows a sustained goal's round to every chat the turn answers;
// the turn's final reply still goes out at RESPOND.
func (t *turn) progress(ctx workflow.Context) {
	var ins []protocol.DeliverInput
	for _, m := range t.answered {
		if !m.Route.Deliverable() || hasRoute(ins, m.Route) {
			continue
		}
		ins = append(ins, protocol.DeliverInput{
			SessionKey: t.in.SessionKey, Turn: t.id, Route: m.Route,
			Text: t.run.final.Text, EntryID: t.run.final.EntryID, StopReason: protocol.StopCompleted,
		})
	}
	t.deliverTo(ctx, ins)
}

func hasRoute(ins []protocol.DeliverInput, r protocol.Route) bool {
	for _, in := range ins {
		if in.Route.Equal(r) {
			return true
		}
	}
	return false
}

// continueAsNew carries the turn into a fresh run when history grew long.
func (t *turn) continueAsNew(ctx workflow.Context) error {
	_ = workflow.Await(ctx, func() bool { return t.inflight == 0 })
	t.drainSignals()
	next := protocol.TurnInput{
		SessionKey: t.in.SessionKey, Settings: t.in.Settings, Carry: t.pending,
		Resume: &protocol.TurnResume{
			Turn: t.id, Message: t.msg, Answered: t.answered, Delivered: t.delivered,
			Started: t.started, Runner: t.run.RunnerState, Trace: t.m.trace, OriginAnswered: t.run.originAnswered, Profile: t.profile,
		},
	}
	return workflow.NewContinueAsNewError(ctx, protocol.TurnWorkflowName, next)
}
