package workflows

import (
	"fmt"

	"go.temporal.io/sdk/workflow"

	"github.com/nanobot-durable/nanobot/protocol"
)

// The repeated-call guard (nanobot #2298, #3699): the same call with the
// same arguments runs at most Settings.MaxRepeatedToolCalls times a turn.
const (
	// repeatStrikesToEnd: the second refused repeat ends the tools for the turn.
	repeatStrikesToEnd = 2
	repeatedCallText   = "Error: this exact call (%s with the same arguments) already ran %d times in this turn and its result will not change, so it was not run again. " +
		"Use the results you already have, try a meaningfully different approach, or answer the user."
	repeatedEndText = "I stopped because I kept repeating the same tool call without making progress. Tell me how you would like to go on."
)

// gateTool decides what becomes of one call before it starts: a repeat
// past the limit gets guidance instead, a call the policy asks about waits
// for a person; the rest start at once. The future yields the call's result.
func (r *runner) gateTool(ctx workflow.Context, c protocol.ToolCallRef, llmEntry string, hints []string) (workflow.Future, error) {
	if text, refused := r.repeated(c); refused {
		return r.resultFuture(ctx, c, text)
	}
	approved := false
	if c.Ask != nil {
		ok, text, err := r.approve(ctx, c)
		if err != nil {
			return nil, err
		}
		if !ok {
			return r.resultFuture(ctx, c, text)
		}
		approved = true
	}
	return r.startTool(ctx, c, llmEntry, hints, approved), nil
}

// repeated counts the call and reports whether it is one repeat too many.
// Calls journaled before signatures existed carry none and are not counted.
func (r *runner) repeated(c protocol.ToolCallRef) (string, bool) {
	limit := r.cfg.Settings.MaxRepeatedToolCalls
	if c.Signature == "" || limit <= 0 {
		return "", false
	}
	if r.Repeats == nil {
		r.Repeats = map[string]int{}
	}
	r.Repeats[c.Signature]++
	if n := r.Repeats[c.Signature]; n <= limit {
		return "", false
	}
	r.RepeatStrikes++
	return fmt.Sprintf(repeatedCallText, c.Name, limit), true
}

// resultFuture journals a result the workflow produced for a call and
// hands it back as the call's future.
func (r *runner) resultFuture(ctx workflow.Context, c protocol.ToolCallRef, text string) (workflow.Future, error) {
	out, err := r.toolResult(ctx, c, text, true)
	if err != nil {
		return nil, fmt.Errorf("journal the result of tool %s (%s): %w", c.Name, c.ID, err)
	}
	f, set := workflow.NewFuture(ctx)
	set.Set(out, nil)
	return f, nil
}
