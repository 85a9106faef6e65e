package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/nanobot-durable/nanobot/protocol"
)

// memoryState is what the turn knows about its prompt's size.
type memoryState struct {
	promptTokens int // RESTORE's count of this turn's prompt
	budget       int
}

// noteRestore keeps RESTORE's count for COMPACT.
func (t *turn) noteRestore(res protocol.RestoreResult) {
	t.mem.promptTokens, t.mem.budget = res.EstimatedTokens, res.Budget
}

// consolidateBeforeTurn archives old turns when the prompt reached the budget.
func (t *turn) consolidateBeforeTurn(ctx workflow.Context) {
	if !t.msg.Kind.RemembersIn() || t.mem.budget <= 0 || t.mem.promptTokens < t.mem.budget {
		return
	}
	t.consolidate(ctx, protocol.ConsolidateBudget, t.mem.budget)
}

// consolidateBeforeNew archives the whole session before /new clears it;
// if this fails, /new archives raw or refuses to clear.
func (t *turn) consolidateBeforeNew(ctx workflow.Context) {
	if !t.msg.Kind.RemembersIn() {
		return
	}
	if name, _, ok := protocol.ParseCommand(t.msg.Content); ok && name == "/new" {
		t.consolidate(ctx, protocol.ConsolidateNew, 0)
	}
}

// consolidateAfterSave measures the next prompt and consolidates now, so
// the next turn starts under budget.
func (t *turn) consolidateAfterSave(ctx workflow.Context) {
	if !t.msg.Kind.RemembersIn() {
		return
	}
	var m protocol.MeasureResult
	if err := workflow.ExecuteLocalActivity(localCtx(ctx, "measure"), protocol.ActivityMeasure, t.step()).Get(ctx, &m); err != nil {
		workflow.GetLogger(ctx).Warn("measuring the next prompt failed", "session", t.in.SessionKey, "error", err)
		return
	}
	if m.Budget > 0 && m.PromptTokens >= m.Budget {
		t.consolidate(ctx, protocol.ConsolidateAfterSave, m.Budget)
	}
}

// consolidate runs rounds until the prompt is under budget × ratio, a round
// archives nothing, or five rounds ran. A failure is logged: the turn goes
// on, and governance still keeps the request inside the window.
func (t *turn) consolidate(ctx workflow.Context, reason string, budget int) {
	s := t.in.Settings
	target := int(float64(budget) * s.ConsolidationRatio)
	for round := 1; round <= protocol.MaxConsolidationRounds; round++ {
		in := protocol.ConsolidateInput{SessionKey: t.in.SessionKey, Turn: t.id, Reason: reason, Round: round, Settings: s, Target: target}
		var res protocol.ConsolidateResult
		err := workflow.ExecuteActivity(consolidateCtx(ctx, s, fmt.Sprintf("consolidate %s #%d", reason, round)), protocol.ActivityConsolidate, in).Get(ctx, &res)
		if err != nil {
			workflow.GetLogger(ctx).Error("consolidation failed", "session", t.in.SessionKey, "reason", reason, "round", round, "error", err)
			return
		}
		if reason == protocol.ConsolidateNew || res.Archived == 0 || res.PromptTokens <= target {
			return
		}
	}
}

func consolidateCtx(ctx workflow.Context, s protocol.Settings, summary string) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           instanceOf(ctx).LLMTaskQueue(),
		StartToCloseTimeout: s.LLMTimeout,
		HeartbeatTimeout:    s.LLMHeartbeat,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumAttempts: 3},
		Summary:             summary,
	})
}
