package workflows

import (
	"errors"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/protocol"
)

// The states of a subagent: it builds its own conversation from the task,
// runs the same loop as a turn, saves, and tells the origin session.
const (
	Announce State = "ANNOUNCE"
)

// SubagentTable is the whole control flow of a subagent.
var SubagentTable = []Transition{
	{Build, EvOK, Run},
	{Run, EvOK, Save},
	{Save, EvOK, Announce},
	{Announce, EvOK, Done},
}

// subagent is one run of SubagentWorkflow; it hosts the runner with no
// inbox (nothing is injected into a subagent) and no finalization.
type subagent struct {
	in  protocol.SubagentInput
	m   machine
	run runner
}

// SubagentWorkflow runs a task spawned by a turn, in its own session, with
// the subagent tool set; it outlives the turn (parent-close policy abandon)
// and announces its result into the origin session.
func SubagentWorkflow(ctx workflow.Context, in protocol.SubagentInput) (*protocol.SubagentResult, error) {
	s := &subagent{in: in}
	s.run = runner{host: s}
	s.m = machine{table: SubagentTable, handlers: map[State]handler{
		Build: s.build, Run: s.run.execute, Save: s.save, Announce: s.announce,
	}}
	if err := workflow.SetQueryHandler(ctx, protocol.QueryState, s.state); err != nil {
		return nil, err
	}
	start := Build
	if in.Resume != nil {
		s.run.RunnerState, start = *in.Resume, Run
	}
	upgradeStep(ctx)
	workflow.SetCurrentDetails(ctx, "subagent ["+in.Label+"] of "+in.OriginKey)
	err := s.m.run(ctx, start, Done)
	var can *workflow.ContinueAsNewError
	switch {
	case errors.As(err, &can):
		return nil, err
	case temporal.IsCanceledError(err):
		return nil, s.cancelled(ctx, err)
	case err != nil:
		return nil, s.failed(ctx, err)
	}
	return &protocol.SubagentResult{
		ID: in.ID, Label: in.Label, StopReason: s.run.final.StopReason,
		ResultPreview: chat.Preview(s.run.final.Text, protocol.PreviewBytes), Iterations: s.run.Iteration,
	}, nil
}

func (s *subagent) turn() string { return "subagent-" + s.in.ID }

func (s *subagent) step() protocol.StepInput {
	return protocol.StepInput{
		SessionKey: protocol.SubagentSessionKey(s.in.ID), Turn: s.turn(), Settings: s.in.Settings,
		Message: protocol.Inbound{ID: s.in.ID, SessionKey: protocol.SubagentSessionKey(s.in.ID), Route: protocol.Route{Channel: "subagent", ChatID: s.in.ID}},
	}
}

func (s *subagent) build(ctx workflow.Context) (Event, error) {
	err := onWorkspace(ctx, s.in.Settings, "subagent build", protocol.ActivitySubagentBuild, s.in).Get(ctx, nil)
	return EvOK, err
}

func (s *subagent) save(ctx workflow.Context) (Event, error) {
	in := protocol.SaveInput{
		StepInput: s.step(), StopReason: s.run.final.StopReason, FinalEntry: s.run.final.EntryID,
		Segments: s.run.Segments, PromptTokens: s.run.PromptTokens, CompletionTokens: s.run.CompletionTokens,
	}
	if s.run.final.EntryID == "" {
		in.Reply = s.run.final.Text
	}
	if len(s.run.Segments) > 1 {
		s.run.final.EntryID = "final"
	}
	err := workflow.ExecuteLocalActivity(localCtx(ctx, "save"), protocol.ActivitySave, in).Get(ctx, nil)
	return EvOK, err
}

// announce signals the result into the origin session: it starts a turn
// there, or is injected into the one running. A waited-for subagent's
// result goes back as the spawn call's result instead.
func (s *subagent) announce(ctx workflow.Context) (Event, error) {
	if s.in.Wait {
		return EvOK, nil
	}
	in := protocol.AnnounceInput{
		Subagent: s.in, Turn: s.turn(), FinalEntry: s.run.final.EntryID, StopReason: s.run.final.StopReason,
	}
	if s.run.final.EntryID == "" {
		in.Text = s.run.final.Text
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           instanceOf(ctx).TaskQueue(),
		StartToCloseTimeout: time.Minute,
		HeartbeatTimeout:    protocol.HeartbeatTimeout,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: time.Minute, MaximumAttempts: 30},
		Summary:             "announce to " + s.in.OriginKey,
	})
	return EvOK, workflow.ExecuteActivity(actx, protocol.ActivityAnnounce, in).Get(ctx, nil)
}

// failed saves and announces a subagent that cannot go on, so its origin
// session hears of it; the run then fails as it did.
func (s *subagent) failed(ctx workflow.Context, cause error) error {
	workflow.GetLogger(ctx).Error("the subagent failed; telling its origin", "subagent", s.in.ID, "error", cause)
	s.run.final = reply{Text: protocol.FailedTurnText(FailureReason(cause)), StopReason: protocol.StopFailed}
	if _, err := s.save(ctx); err != nil {
		workflow.GetLogger(ctx).Error("saving a failed subagent failed", "subagent", s.in.ID, "error", err)
	}
	if _, err := s.announce(ctx); err != nil {
		workflow.GetLogger(ctx).Error("announcing a failed subagent failed", "subagent", s.in.ID, "error", err)
	}
	return cause
}

// cancelled saves what the subagent did (/stop in its origin session).
func (s *subagent) cancelled(ctx workflow.Context, cause error) error {
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	in := protocol.SaveInput{StepInput: s.step(), StopReason: protocol.StopCancelled}
	if err := workflow.ExecuteLocalActivity(localCtx(dctx, "save after stop"), protocol.ActivitySave, in).Get(dctx, nil); err != nil {
		workflow.GetLogger(ctx).Error("saving a stopped subagent failed", "subagent", s.in.ID, "error", err)
	}
	return cause
}

func (s *subagent) state() (protocol.TurnState, error) {
	return protocol.TurnState{
		SessionKey: protocol.SubagentSessionKey(s.in.ID), State: string(s.m.current),
		Iteration: s.run.Iteration, Trace: s.m.trace, Hints: s.run.hints, Waiting: s.run.waitingFor,
	}, nil
}

// The subagent is the runner's host: no inbox, no finalization, the
// subagent tool set.

func (s *subagent) loopConfig() loopConfig {
	return loopConfig{
		SessionKey: protocol.SubagentSessionKey(s.in.ID), OriginKey: s.in.OriginKey, Turn: s.turn(), Settings: s.in.Settings,
		Route: protocol.Route{Channel: "subagent", ChatID: s.in.ID}, Profile: protocol.ProfileFor(protocol.SubagentTurn, false), NoFinalize: true,
		FailOnToolError: s.in.Settings.FailOnToolError,
	}
}

func (s *subagent) waiting() int                                  { return 0 }
func (s *subagent) injectWaiting(workflow.Context, int, int) bool { return false }
func (s *subagent) onAnswer(workflow.Context)                     {}
func (s *subagent) progress(workflow.Context)                     {}

// approvalRoutes: a subagent asks in the chat that spawned it.
func (s *subagent) approvalRoutes() []protocol.Route {
	if !s.in.Origin.Deliverable() {
		return nil
	}
	return []protocol.Route{s.in.Origin}
}

// showApproval asks in the chat that spawned the subagent.
func (s *subagent) showApproval(ctx workflow.Context, req protocol.ApprovalRequest) {
	if !s.in.Origin.Deliverable() {
		return
	}
	req.Reason = "subagent [" + s.in.Label + "]: " + req.Reason
	deliverAll(ctx, s.in.OriginKey, []protocol.DeliverInput{approvalDelivery(s.in.OriginKey, s.turn(), s.in.Origin, nil, req)})
}

func (s *subagent) continueAsNew(ctx workflow.Context) error {
	next := s.in
	state := s.run.RunnerState
	next.Resume = &state
	return workflow.NewContinueAsNewError(ctx, protocol.SubagentWorkflowName, next)
}
