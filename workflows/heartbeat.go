package workflows

import (
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/workflow"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/protocol"
)

// heartbeatPrompt opens the heartbeat turn's message; the tasks follow.
const heartbeatPrompt = "[Heartbeat] Work through the active tasks of HEARTBEAT.md below. " +
	"Nobody is waiting for this reply: say briefly what you did and what the user should know."

// HeartbeatWorkflow is one firing of the heartbeat schedule (nanobot's
// rule): no active tasks in HEARTBEAT.md, no model call. Otherwise a turn
// runs in the heartbeat session without the message tool; then
// evaluate_notification decides whether its reply goes to the most
// recently active chat. Any failure keeps the chat silent (fail closed).
func HeartbeatWorkflow(ctx workflow.Context, in protocol.HeartbeatInput) (*protocol.HeartbeatResult, error) {
	log := workflow.GetLogger(ctx)
	var tasks protocol.HeartbeatTasks
	if err := workflow.ExecuteActivity(workspaceCtx(ctx, "read HEARTBEAT.md"), protocol.ActivityHeartbeatTasks, in).Get(ctx, &tasks); err != nil {
		return nil, err
	}
	res := &protocol.HeartbeatResult{Reason: "no active tasks in HEARTBEAT.md"}
	if tasks.Tasks == "" {
		return res, nil
	}
	res.Ran = true
	s := tasks.Settings
	s.Stream = false
	msg := heartbeatInbound(ctx, tasks)
	child := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID: instanceOf(ctx).TurnWorkflowID(protocol.HeartbeatSessionKey), TaskQueue: instanceOf(ctx).TaskQueue(),
		ParentClosePolicy: enumspb.PARENT_CLOSE_POLICY_TERMINATE, StaticSummary: "heartbeat: " + chat.Preview(strings.TrimSpace(strings.SplitN(tasks.Tasks, "\n", 2)[0]), 80),
	})
	run := workflow.ExecuteChildWorkflow(child, protocol.TurnWorkflowName,
		protocol.TurnInput{SessionKey: protocol.HeartbeatSessionKey, Settings: s, Carry: []protocol.Inbound{msg}})
	var started workflow.Execution
	var turn protocol.TurnResult
	err := run.GetChildWorkflowExecution().Get(ctx, &started)
	if err == nil {
		err = run.Get(ctx, &turn)
	}
	res.StopReason = turn.StopReason
	switch {
	case err != nil:
		log.Error("the heartbeat turn failed", "error", err)
		res.Reason = "the heartbeat turn failed: " + err.Error()
	case turn.StopReason != protocol.StopCompleted:
		res.Reason = "the heartbeat turn stopped: " + turn.StopReason
	default:
		notifyHeartbeat(ctx, s, tasks, started.RunID, res)
	}
	if err == nil || started.RunID != "" {
		trim := protocol.HeartbeatTrimInput{SessionKey: protocol.HeartbeatSessionKey, Keep: tasks.KeepRecentMessages}
		if err := workflow.ExecuteActivity(upkeepCtx(ctx, "trim the heartbeat session"), protocol.ActivityHeartbeatTrim, trim).Get(ctx, &res.Kept); err != nil {
			log.Warn("trimming the heartbeat session failed", "error", err)
		}
	}
	return res, nil
}

// notifyHeartbeat asks evaluate_notification and delivers the turn's reply
// when it says so; a failed decision or delivery leaves the chat alone.
func notifyHeartbeat(ctx workflow.Context, s protocol.Settings, tasks protocol.HeartbeatTasks, turn string, res *protocol.HeartbeatResult) {
	log := workflow.GetLogger(ctx)
	q := protocol.HeartbeatDecideInput{SessionKey: protocol.HeartbeatSessionKey, Turn: turn, Tasks: tasks.Tasks, Settings: s}
	var d protocol.HeartbeatDecision
	if err := workflow.ExecuteActivity(consolidateCtx(ctx, s, "evaluate_notification"), protocol.ActivityHeartbeatDecide, q).Get(ctx, &d); err != nil {
		log.Warn("the heartbeat decision failed; nobody is told", "error", err)
		res.Reason = "the decision failed: " + err.Error()
		return
	}
	res.Reason, res.Route = d.Reason, d.Route
	if !d.Notify || d.Route == nil {
		return
	}
	out := protocol.DeliverInput{SessionKey: protocol.HeartbeatSessionKey, Turn: turn, Route: *d.Route,
		MessageIDs: []string{heartbeatMessageID(ctx)}, Text: d.Text, EntryID: d.EntryID, StopReason: protocol.StopCompleted}
	wait := min(max(tasks.Interval, time.Minute), channelDeliveryWait) // a stale notification is not worth more
	dctx := workflow.WithScheduleToStartTimeout(deliverCtx(ctx, out), wait)
	if err := workflow.ExecuteActivity(dctx, protocol.ActivityDeliver, out).Get(ctx, nil); err != nil {
		log.Warn("delivering the heartbeat notification failed", "route", d.Route.String(), "error", err)
		res.Reason = "delivery failed: " + err.Error()
		return
	}
	res.Notified = true
}

// heartbeatInbound is the heartbeat turn's message: nanobot's kind, so the
// message tool stays out, and the tasks as HEARTBEAT.md has them.
func heartbeatInbound(ctx workflow.Context, tasks protocol.HeartbeatTasks) protocol.Inbound {
	content := heartbeatPrompt + "\n\n" + tasks.Tasks
	if tasks.Chars > len(tasks.Tasks) {
		content += "\n\n(The tasks are cut here; read HEARTBEAT.md for the rest.)"
	}
	return protocol.Inbound{
		ID: heartbeatMessageID(ctx), SessionKey: protocol.HeartbeatSessionKey, Kind: protocol.HeartbeatTurn,
		Content: content, SentAt: workflow.Now(ctx),
	}
}

func heartbeatMessageID(ctx workflow.Context) string {
	return "heartbeat/" + workflow.GetInfo(ctx).WorkflowExecution.RunID
}
