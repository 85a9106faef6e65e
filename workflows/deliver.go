package workflows

import (
	"errors"
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/nanobot-durable/nanobot/protocol"
)

// How long a reply waits for a process to take it. A channel's queue is
// served by any gateway holding the connection: a reply waits for one to
// come back. A per-process queue (a CLI, an API request) has one process
// behind it; if that is gone, nobody will come back.
const (
	channelDeliveryWait    = 24 * time.Hour
	perProcessDeliveryWait = 15 * time.Second
)

// How long one delivery attempt may run. A platform's API can be slow; a
// process's own queue only hands the reply to a terminal or a waiting
// request, so an attempt still open after perProcessDeliveryRun was taken
// by a process that died before reporting, and the turn must not stay open
// (and the session's next CLI wait) for two minutes.
// defaultDeliveryAttempts is a delivery's tries when the input names none
// (Dream's and the heartbeat's notices).
const defaultDeliveryAttempts = 10

const (
	channelDeliveryRun    = 2 * time.Minute
	perProcessDeliveryRun = 30 * time.Second
)

// deliver sends the current reply for every answered message not yet
// answered, once per route. A failed delivery is logged, not fatal: the
// reply is in the journal.
func (t *turn) deliver(ctx workflow.Context) {
	msgs := t.answered[t.delivered:]
	t.delivered = len(t.answered)
	var ins []protocol.DeliverInput
	for _, m := range msgs {
		r := m.Route
		if !r.Deliverable() {
			continue
		}
		if t.run.originAnswered && !told(t.run.final.StopReason) && r.SameChat(t.msg.Route) {
			continue // the message tool already answered this chat in this turn
		}
		in := protocol.DeliverInput{
			SessionKey: t.in.SessionKey, Turn: t.id, Route: r,
			Text: t.run.final.Text, EntryID: t.run.final.EntryID, StopReason: t.run.final.StopReason,
		}
		if r.SameChat(t.msg.Route) {
			in.Drawn = t.run.final.Drawn // the stream was drawn in the origin's chat
		}
		ins = addByRoute(ins, m, in)
	}
	t.deliverTo(ctx, ins)
}

// addByRoute adds m to the delivery for its route, or starts one from
// fresh: one delivery per route, naming every message it answers.
func addByRoute(ins []protocol.DeliverInput, m protocol.Inbound, fresh protocol.DeliverInput) []protocol.DeliverInput {
	if i := slices.IndexFunc(ins, func(in protocol.DeliverInput) bool { return in.Route.Equal(m.Route) }); i >= 0 {
		ins[i].MessageIDs = append(ins[i].MessageIDs, m.ID)
		return ins
	}
	fresh.MessageIDs = []string{m.ID}
	return append(ins, fresh)
}

// told: replies of these stop reasons reach the chat even when the message
// tool already answered it (a command's answer, a failure).
func told(stopReason string) bool {
	return stopReason == protocol.StopCommand || stopReason == protocol.StopFailed
}

// deliverTo runs the deliveries in parallel and waits for them. A reply to
// a process that is gone is left in the journal, marked undelivered, so
// the next CLI in that session shows it.
func (t *turn) deliverTo(ctx workflow.Context, ins []protocol.DeliverInput) {
	for i := range ins {
		ins[i].MaxAttempts = t.in.Settings.SendMaxRetries
	}
	deliverAll(ctx, t.in.SessionKey, ins)
}

// deliverAll runs deliveries in parallel and waits for them (see deliverTo).
func deliverAll(ctx workflow.Context, sessionKey string, ins []protocol.DeliverInput) {
	futures := make([]workflow.Future, len(ins))
	for i, in := range ins {
		futures[i] = workflow.ExecuteActivity(deliverCtx(ctx, in), protocol.ActivityDeliver, in)
	}
	for i, f := range futures {
		err := f.Get(ctx, nil)
		if err == nil {
			continue
		}
		in := ins[i]
		var te *temporal.TimeoutError
		if in.Route.PerProcess() && errors.As(err, &te) {
			workflow.GetLogger(ctx).Info("the process that asked is gone; the reply stays in the journal",
				"session", sessionKey, "route", in.Route.String())
			mark := workflow.ExecuteLocalActivity(localCtx(ctx, "mark undelivered"), protocol.ActivityMarkUndelivered, in)
			if err := mark.Get(ctx, nil); err != nil {
				workflow.GetLogger(ctx).Warn("marking an undelivered reply failed", "session", sessionKey, "error", err)
			}
			continue
		}
		workflow.GetLogger(ctx).Error("delivery failed", "session", sessionKey, "route", in.Route.String(), "error", err)
	}
}

// deliverCtx puts a delivery on the queue of whoever owns the chat, with
// retries that honour the platform's retry-after (the activity sets the
// delay), as many as in.MaxAttempts allows.
func deliverCtx(ctx workflow.Context, in protocol.DeliverInput) workflow.Context {
	r := in.Route
	attempts := in.MaxAttempts
	if attempts <= 0 {
		attempts = defaultDeliveryAttempts
	}
	wait, run := channelDeliveryWait, channelDeliveryRun
	if r.PerProcess() {
		wait, run = perProcessDeliveryWait, perProcessDeliveryRun
	}
	// Timeouts are not part of the command's identity: replays are unaffected.
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:              r.DeliveryQueue(instanceOf(ctx)),
		ScheduleToStartTimeout: wait,
		StartToCloseTimeout:    run,
		// The activity beats while it sends: a gateway that died mid-reply is
		// noticed in this, and the retry resumes from the parts it recorded.
		HeartbeatTimeout: protocol.HeartbeatTimeout,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 5 * time.Minute, MaximumAttempts: attempts,
			NonRetryableErrorTypes: []string{protocol.ErrDeliveryRejected},
		},
		Summary: "deliver to " + r.Channel,
	})
}

// showApproval shows an approval request in every chat the turn answers.
// The messages it names stay unanswered: the turn's reply still goes to them.
func (t *turn) showApproval(ctx workflow.Context, req protocol.ApprovalRequest) {
	t.deliverTo(ctx, t.approvalDeliveries(req))
}

func (t *turn) approvalDeliveries(req protocol.ApprovalRequest) []protocol.DeliverInput {
	var ins []protocol.DeliverInput
	for _, m := range t.answered[t.delivered:] {
		if !m.Route.Deliverable() {
			continue
		}
		ins = addByRoute(ins, m, approvalDelivery(t.in.SessionKey, t.id, m.Route, nil, req))
	}
	if len(ins) == 0 && t.msg.Route.Deliverable() { // every message already answered (a goal's round): ask the origin
		ins = append(ins, approvalDelivery(t.in.SessionKey, t.id, t.msg.Route, nil, req))
	}
	return ins
}

// approvalRoutes are the routes showApproval delivers to.
func (t *turn) approvalRoutes() []protocol.Route {
	var routes []protocol.Route
	for _, in := range t.approvalDeliveries(protocol.ApprovalRequest{}) {
		routes = append(routes, in.Route)
	}
	return routes
}

func approvalDelivery(sessionKey, turn string, r protocol.Route, ids []string, req protocol.ApprovalRequest) protocol.DeliverInput {
	return protocol.DeliverInput{
		SessionKey: sessionKey, Turn: turn, Route: r, MessageIDs: ids,
		Text: req.Text(), Kind: protocol.ReplyApproval, Approval: &req,
	}
}
