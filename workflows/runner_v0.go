package workflows

import (
	"fmt"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/nanobot-durable/nanobot/protocol"
)

// executeV0 is the runner of runs recorded before runnerV1: kept so those
// runs replay unchanged.
func (r *runner) executeV0(ctx workflow.Context) (Event, error) {
	s := r.cfg.Settings
	for {
		if r.Iteration >= s.MaxIterations {
			r.final = reply{Text: fmt.Sprintf(maxIterationsText, s.MaxIterations), StopReason: protocol.StopMaxIterations}
			return EvOK, nil
		}
		r.Iteration++
		workflow.SetCurrentDetails(ctx, fmt.Sprintf("RUN iteration %d/%d", r.Iteration, s.MaxIterations))
		in := protocol.LLMCallInput{SessionKey: r.cfg.SessionKey, Turn: r.cfg.Turn, Iteration: r.Iteration, Settings: s}
		var res protocol.LLMCallResult
		err := workflow.ExecuteActivity(llmCtx(ctx, s, fmt.Sprintf("llm #%d %s", r.Iteration, s.Model)), protocol.ActivityLLMCall, in).Get(ctx, &res)
		if err != nil {
			if temporal.IsCanceledError(err) {
				return "", err
			}
			r.final = reply{Text: modelErrorText(err, s), StopReason: protocol.StopError}
			return EvOK, nil
		}
		if len(res.ToolCalls) > 0 && toolFinishReasons[res.FinishReason] {
			if err := r.runTools(ctx, &res); err != nil {
				return "", err
			}
			continue
		}
		r.final = reply{EntryID: res.EntryID, Text: res.ContentPreview, StopReason: protocol.StopCompleted}
		return EvOK, nil
	}
}
