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

// approvalProofChange is the version marker of the checked answer: from
// version 1 an answer (a signal, or one that raced the timer) runs the call
// only when its proof checks out (a local activity, so the key stays out of
// history), and every call is looked up in the session's allowances instead
// of the run's cache, which /approvals clear could not reach. A run already
// waiting when this build arrived keeps the default path.
const approvalProofChange = "approval-proof"

// approve asks a person about a call the policy asks about and waits for
// the answer (a signal) or the timeout (a durable timer). It returns
// whether the call may run, and the tool's result for the model when not.
func (r *runner) approve(ctx workflow.Context, c protocol.ToolCallRef) (bool, string, error) {
	proven := workflow.GetVersion(ctx, approvalProofChange, workflow.DefaultVersion, 1) >= 1
	if !proven && slices.Contains(r.Always, c.Ask.Key) {
		return true, "", nil
	}
	info := workflow.GetInfo(ctx).WorkflowExecution
	in := protocol.ApprovalAskInput{
		OriginKey: r.cfg.OriginKey, WorkflowID: info.ID, ID: protocol.ApprovalID(info.ID, r.cfg.Turn+"/"+c.ID),
		Tool: c.Name, Args: c.Ask.Args, Reason: c.Ask.Reason, Key: c.Ask.Key, Rule: c.Ask.Rule, Once: c.Ask.Once,
		RunID: info.RunID, Shown: r.host.approvalRoutes(),
	}
	var asked protocol.ApprovalAskResult
	if err := workflow.ExecuteLocalActivity(localCtx(ctx, "ask approval for "+c.Name), protocol.ActivityApprovalAsk, in).Get(ctx, &asked); err != nil {
		return false, fmt.Sprintf(approvalGoneText, FailureReason(err)), nil
	}
	if asked.Allowed {
		if !proven {
			r.Always = append(r.Always, c.Ask.Key)
		}
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
	answer, err := r.awaitAnswer(ctx, req, proven)
	if err != nil {
		r.closeRequest(ctx, req, protocol.VerdictCancelled) // a later /approve is told the task stopped
		return false, "", err
	}
	switch {
	case answer.Verdict == protocol.VerdictAlways && !proven:
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

// awaitAnswer waits for the answer to req: a signal carrying its id (and,
// when proven, a proof that checks out), or the timeout, after which the
// request is closed (an answer that raced the timer wins, if it checks out).
func (r *runner) awaitAnswer(ctx workflow.Context, req protocol.ApprovalRequest, proven bool) (protocol.ApprovalAnswer, error) {
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
			if err == nil && proven && answer.Verdict != protocol.VerdictTimeout && !r.checked(ctx, answer) {
				answer = protocol.ApprovalAnswer{ID: req.ID, Verdict: protocol.VerdictTimeout}
			}
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
		if got != nil && (!proven || r.checked(ctx, *got)) {
			return *got, nil
		}
	}
}

// checked reports whether an answer's proof checks out for this run; one
// that does not (a raw signal from a shell) is ignored and the wait goes on.
func (r *runner) checked(ctx workflow.Context, a protocol.ApprovalAnswer) bool {
	info := workflow.GetInfo(ctx).WorkflowExecution
	in := protocol.ApprovalVerifyInput{WorkflowID: info.ID, RunID: info.RunID, Answer: a}
	var ok bool
	if err := workflow.ExecuteLocalActivity(localCtx(ctx, "check approval answer"), protocol.ActivityApprovalVerify, in).Get(ctx, &ok); err != nil {
		workflow.GetLogger(ctx).Warn("checking an approval answer failed; it is ignored", "id", a.ID, "error", err)
		return false
	}
	if !ok {
		workflow.GetLogger(ctx).Warn("an approval answer without a valid proof; ignored, still waiting", "id", a.ID, "verdict", a.Verdict, "by", a.By)
	}
	return ok
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
