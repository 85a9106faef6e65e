package workflows

import (
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/nanobot-durable/nanobot/protocol"
)

// dreamMaxIterations bounds a Dream run's model calls: Dream loops that
// re-apply the same edit burn tokens (nanobot #5324).
const dreamMaxIterations = 15

// DreamWorkflow tidies memory: it picks up to 20 history entries Dream has
// not absorbed, runs a turn in a dream:* session with Dream's confined
// tools, and only when that turn completes moves the cursor; the memory
// files are committed either way. A /dream gets the result in its chat.
func DreamWorkflow(ctx workflow.Context, in protocol.DreamInput) (*protocol.DreamResult, error) {
	var plan protocol.DreamPlan
	if err := workflow.ExecuteActivity(workspaceCtx(ctx, "prepare dream"), protocol.ActivityPrepareDream, in).Get(ctx, &plan); err != nil {
		return nil, err
	}
	res := &protocol.DreamResult{Text: "Nothing to dream about: no new history since the last Dream."}
	if plan.Entries > 0 {
		s := plan.Settings
		s.MaxIterations = min(s.MaxIterations, dreamMaxIterations)
		s.Stream = false
		msg := dreamInbound(plan)
		child := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
			WorkflowID: instanceOf(ctx).TurnWorkflowID(plan.SessionKey), TaskQueue: instanceOf(ctx).TaskQueue(),
			ParentClosePolicy: enumspb.PARENT_CLOSE_POLICY_TERMINATE, StaticSummary: msg.Content,
		})
		var turn protocol.TurnResult
		err := workflow.ExecuteChildWorkflow(child, protocol.TurnWorkflowName,
			protocol.TurnInput{SessionKey: plan.SessionKey, Settings: s, Carry: []protocol.Inbound{msg}}).Get(ctx, &turn)
		if err != nil {
			workflow.GetLogger(ctx).Error("the Dream turn failed", "session", plan.SessionKey, "error", err)
		}
		fin := protocol.FinishDreamInput{Plan: plan, Completed: err == nil && turn.StopReason == protocol.StopCompleted, Reply: turn.ReplyPreview}
		if err := workflow.ExecuteActivity(workspaceCtx(ctx, "finish dream"), protocol.ActivityFinishDream, fin).Get(ctx, res); err != nil {
			return nil, err
		}
	}
	if r := in.Route; r != nil && r.Deliverable() {
		d := protocol.DeliverInput{SessionKey: protocol.SessionKey(r.Channel, r.ChatID), Turn: workflow.GetInfo(ctx).WorkflowExecution.RunID,
			Route: *r, Text: res.Text, StopReason: protocol.StopCompleted}
		if err := workflow.ExecuteActivity(deliverCtx(ctx, d), protocol.ActivityDeliver, d).Get(ctx, nil); err != nil {
			workflow.GetLogger(ctx).Warn("delivering the Dream result failed", "route", r.String(), "error", err)
		}
	}
	return res, nil
}

// dreamInbound starts the Dream turn; BUILD expands it into the entries
// and the memory files (the payload stays small).
func dreamInbound(plan protocol.DreamPlan) protocol.Inbound {
	return protocol.Inbound{
		ID: plan.SessionKey, SessionKey: plan.SessionKey, Kind: protocol.DreamTurn,
		Content:  fmt.Sprintf("Dream: absorb history entries %d to %d into memory.", plan.From+1, plan.To),
		Metadata: map[string]string{"dream_from": fmt.Sprint(plan.From), "dream_to": fmt.Sprint(plan.To)},
	}
}

// IdleCompactWorkflow summarizes sessions idle longer than
// idleCompactAfterMinutes down to their last 8 messages; sessions with a
// running turn are skipped.
func IdleCompactWorkflow(ctx workflow.Context, in protocol.IdleCompactInput) (*protocol.IdleCompactResult, error) {
	var found protocol.IdleSessions
	if err := workflow.ExecuteActivity(upkeepCtx(ctx, "find idle sessions"), protocol.ActivityIdleSessions, in).Get(ctx, &found); err != nil {
		return nil, err
	}
	res := &protocol.IdleCompactResult{Skipped: found.Skipped}
	s := found.Settings
	run := workflow.GetInfo(ctx).WorkflowExecution.RunID
	for _, key := range found.Sessions {
		c := protocol.ConsolidateInput{SessionKey: key, Turn: run, Reason: protocol.ConsolidateIdle, Round: 1, Settings: s}
		var out protocol.ConsolidateResult
		if err := workflow.ExecuteActivity(consolidateCtx(ctx, s, "compact idle "+key), protocol.ActivityConsolidate, c).Get(ctx, &out); err != nil {
			workflow.GetLogger(ctx).Error("compacting an idle session failed", "session", key, "error", err)
			continue
		}
		res.Compacted = append(res.Compacted, key)
	}
	return res, nil
}

func upkeepCtx(ctx workflow.Context, summary string) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue: instanceOf(ctx).TaskQueue(), StartToCloseTimeout: 2 * time.Minute, HeartbeatTimeout: protocol.HeartbeatTimeout,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumAttempts: 5},
		Summary:     summary,
	})
}
