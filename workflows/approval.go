package workflows

import (
	"fmt"
	"slices"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/nanobot-durable/nanobot/protocol"
)

// Texts the model gets when a person said no, or nothing.
const (
	deniedText       = "The user denied this: %s. Do not run it again; find another way or ask the user."
	deniedNoReason   = "no reason given"
	approvalTimedOut = "Nobody approved this call within %s, so it was not run. Go on without it, or ask the user."
	approvalGoneText = "The approval request could not be recorded, so the call was not run: %s"
)

// detailsRefresh are the waits between refreshes of "asked … ago" in the
// Web UI while a request waits: often at first, then hourly (a few timers a day).
var detailsRefresh = []time.Duration{time.Minute, 4 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute}

// approve asks a person about a call the policy asks about and waits for
// the answer (a signal) or the timeout (a durable timer). It returns
// whether the call may run, and the tool's result for the model when not.
func (r *runner) approve(ctx workflow.Context, c protocol.ToolCallRef) (bool, string, error) {
	if slices.Contains(r.Always, c.Ask.Key) {
		return true, "", nil
	}
	wid := workflow.GetInfo(ctx).WorkflowExecution.ID
	in := protocol.ApprovalAskInput{
		OriginKey: r.cfg.OriginKey, WorkflowID: wid, ID: protocol.ApprovalID(wid, r.cfg.Turn+"/"+c.ID),
		Tool: c.Name, Args: c.Ask.Args, Reason: c.Ask.Reason, Key: c.Ask.Key,
	}
	var asked protocol.ApprovalAskResult
	if err := workflow.ExecuteLocalActivity(localCtx(ctx, "ask approval for "+c.Name), protocol.ActivityApprovalAsk, in).Get(ctx, &asked); err != nil {
		return false, fmt.Sprintf(approvalGoneText, FailureReason(err)), nil
	}
	if asked.Allowed {
		r.Always = append(r.Always, c.Ask.Key)
		return true, "", nil
	}
	req := asked.Request
	req.AskedAt = workflow.Now(ctx) // the workflow's clock: "asked … ago" agrees on every replay
	req.Timeout = r.cfg.Settings.ApprovalTimeout
	if req.Timeout <= 0 {
		req.Timeout = protocol.DefaultApprovalTimeout
	}
	r.waitingFor = &req
	defer func() { r.waitingFor = nil }()
	r.host.showApproval(ctx, req)
	answer, err := r.awaitAnswer(ctx, req)
	if err != nil {
		r.closeRequest(ctx, req, protocol.VerdictCancelled) // a later /approve is told the task stopped
		return false, "", err
	}
	switch {
	case answer.Verdict == protocol.VerdictAlways:
		r.Always = append(r.Always, c.Ask.Key)
		return true, "", nil
	case answer.Approved():
		return true, "", nil
	case answer.Verdict == protocol.VerdictTimeout:
		return false, fmt.Sprintf(approvalTimedOut, req.Timeout), nil
	}
	reason := answer.Reason
	if reason == "" {
		reason = deniedNoReason
	}
	return false, fmt.Sprintf(deniedText, reason), nil
}

// awaitAnswer waits for the answer to req: a signal carrying its id, or the
// timeout, after which the request is closed (an answer that raced the timer wins).
func (r *runner) awaitAnswer(ctx workflow.Context, req protocol.ApprovalRequest) (protocol.ApprovalAnswer, error) {
	answers := workflow.GetSignalChannel(ctx, protocol.SignalApproval)
	asked := workflow.Now(ctx)
	deadline := asked.Add(req.Timeout)
	for step := 0; ; step++ {
		now := workflow.Now(ctx)
		workflow.SetCurrentDetails(ctx, req.WaitingLine(now.Sub(asked)))
		if !now.Before(deadline) {
			var answer protocol.ApprovalAnswer
			in := protocol.ApprovalCloseInput{OriginKey: r.cfg.OriginKey, ID: req.ID, Verdict: protocol.VerdictTimeout}
			err := workflow.ExecuteLocalActivity(localCtx(ctx, "approval timed out"), protocol.ActivityApprovalClose, in).Get(ctx, &answer)
			return answer, err
		}
		wait := time.Hour
		if step < len(detailsRefresh) {
			wait = detailsRefresh[step]
		}
		wait = min(wait, deadline.Sub(now))
		tctx, cancel := workflow.WithCancel(ctx)
		timer := workflow.NewTimer(tctx, wait)
		var got *protocol.ApprovalAnswer
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(answers, func(ch workflow.ReceiveChannel, _ bool) {
			var a protocol.ApprovalAnswer
			ch.Receive(ctx, &a)
			if a.ID == req.ID {
				got = &a
			} else {
				workflow.GetLogger(ctx).Warn("an approval answer for another request; ignored", "id", a.ID, "waiting", req.ID)
			}
		})
		sel.AddFuture(timer, func(workflow.Future) {})
		sel.Select(ctx)
		cancel()
		if err := ctx.Err(); err != nil {
			return protocol.ApprovalAnswer{}, err // /stop ends the wait
		}
		if got != nil {
			return *got, nil
		}
	}
}

// closeRequest ends a request the loop stops waiting for, in a context the
// cancellation does not reach.
func (r *runner) closeRequest(ctx workflow.Context, req protocol.ApprovalRequest, verdict string) {
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	in := protocol.ApprovalCloseInput{OriginKey: r.cfg.OriginKey, ID: req.ID, Verdict: verdict}
	if err := workflow.ExecuteLocalActivity(localCtx(dctx, "approval closed"), protocol.ActivityApprovalClose, in).Get(dctx, nil); err != nil {
		workflow.GetLogger(ctx).Warn("closing an approval request failed", "id", req.ID, "error", err)
	}
}
