package workflows

import (
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/nanobot-durable/nanobot/protocol"
)

// spawner is a host that runs spawn calls itself: a subagent is a child
// workflow, which only workflow code can start.
type spawner interface {
	spawn(ctx workflow.Context, c protocol.ToolCallRef, llmEntry string) workflow.Future
}

// spawn runs one spawn call: checks it, starts the subagent (which outlives
// this turn), and journals the tool result; with wait=true the result is
// the subagent's answer.
func (t *turn) spawn(ctx workflow.Context, c protocol.ToolCallRef, llmEntry string) workflow.Future {
	f, set := workflow.NewFuture(ctx)
	workflow.Go(ctx, func(ctx workflow.Context) {
		res, err := t.runSpawn(ctx, c, llmEntry)
		set.Set(res, err)
	})
	return f
}

func (t *turn) runSpawn(ctx workflow.Context, c protocol.ToolCallRef, llmEntry string) (protocol.ToolCallResult, error) {
	ref := protocol.SpawnRef{SessionKey: t.in.SessionKey, Turn: t.id, LLMEntry: llmEntry, CallID: c.ID, Profile: t.profile}
	var prep protocol.PrepareSpawnResult
	if err := workflow.ExecuteLocalActivity(localCtx(ctx, "prepare spawn"), protocol.ActivityPrepareSpawn, ref).Get(ctx, &prep); err != nil {
		return protocol.ToolCallResult{}, err
	}
	if prep.Refused != "" {
		return t.run.toolResult(ctx, c, prep.Refused, true)
	}
	id := protocol.SubagentID(t.id, c.ID)
	in := protocol.SubagentInput{
		ID: id, Label: prep.Label, Spawn: ref, OriginKey: t.in.SessionKey, Origin: t.msg.Route,
		Settings: t.in.Settings, Wait: prep.Wait,
	}
	opts := workflow.ChildWorkflowOptions{
		WorkflowID:            instanceOf(ctx).Name(protocol.SubagentWorkflowID(id)),
		TaskQueue:             instanceOf(ctx).TaskQueue(),
		ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_ABANDON,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		StaticSummary:         fmt.Sprintf("subagent [%s] of %s", prep.Label, t.in.SessionKey),
		Memo:                  map[string]any{"label": prep.Label, "origin": t.in.SessionKey, "kind": string(protocol.SubagentTurn)},
	}
	if prep.SearchAttributes { // an attribute the namespace lacks would fail this workflow task, over and over
		opts.TypedSearchAttributes = temporal.NewSearchAttributes(
			protocol.SessionKeyAttribute.ValueSet(t.in.SessionKey), protocol.ChannelAttribute.ValueSet(t.msg.Route.Channel))
	}
	cctx := workflow.WithChildOptions(ctx, opts)
	child := workflow.ExecuteChildWorkflow(cctx, protocol.SubagentWorkflowName, in)
	if err := child.GetChildWorkflowExecution().Get(ctx, nil); err != nil {
		if temporal.IsCanceledError(err) {
			return protocol.ToolCallResult{}, err
		}
		return t.run.toolResult(ctx, c, "Error: the subagent could not start: "+err.Error(), true)
	}
	if !prep.Wait {
		return t.run.toolResult(ctx, c, fmt.Sprintf("Subagent [%s] started (id: %s). I'll notify you when it completes.", prep.Label, id), false)
	}
	var res protocol.SubagentResult
	if err := child.Get(ctx, &res); err != nil {
		if temporal.IsCanceledError(err) {
			return protocol.ToolCallResult{}, err
		}
		return t.run.toolResult(ctx, c, fmt.Sprintf("Error: subagent [%s] failed: %v", prep.Label, err), true)
	}
	return t.run.toolResult(ctx, c, res.ResultPreview, res.StopReason == protocol.StopError)
}
