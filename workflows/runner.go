package workflows

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/nanobot-durable/nanobot/protocol"
)

// Texts the user sees, as nanobot words them.
const (
	ModelErrorFallback = "Sorry, I encountered an error calling the AI model."
	ArrearsText        = "The AI provider rejected the request because the API key is out of quota or the account is in arrears. Please top up / check the billing status of your API key and try again."
	maxIterationsText  = "I reached the maximum number of tool call iterations (%d) without completing the task. You can try breaking the task into smaller steps."
)

// runner is the model ⇄ tools loop of the RUN state.
type runner struct {
	t         *turn
	iteration int
}

// toolFinishReasons are the finish reasons under which nanobot runs tool calls.
var toolFinishReasons = map[string]bool{"tool_calls": true, "function_call": true, "stop": true}

func (r *runner) execute(ctx workflow.Context) (Event, error) {
	s := r.t.in.Settings
	for {
		if r.iteration >= s.MaxIterations {
			r.t.final = reply{Text: fmt.Sprintf(maxIterationsText, s.MaxIterations), StopReason: protocol.StopMaxIterations}
			return EvOK, nil
		}
		r.iteration++
		workflow.SetCurrentDetails(ctx, fmt.Sprintf("RUN iteration %d/%d", r.iteration, s.MaxIterations))
		res, err := r.callModel(ctx, false)
		if err != nil {
			if isCanceled(err) {
				return "", err
			}
			r.t.final = reply{Text: modelErrorText(err, s), StopReason: protocol.StopError}
			return EvOK, nil
		}
		if len(res.ToolCalls) > 0 && toolFinishReasons[res.FinishReason] {
			if err := r.runTools(ctx, res.ToolCalls); err != nil {
				return "", err
			}
			continue
		}
		r.t.final = reply{EntryID: res.EntryID, Text: res.ContentPreview, StopReason: protocol.StopCompleted}
		return EvOK, nil
	}
}

func (r *runner) callModel(ctx workflow.Context, noTools bool) (*protocol.LLMCallResult, error) {
	s := r.t.in.Settings
	in := protocol.LLMCallInput{SessionKey: r.t.in.SessionKey, Turn: r.t.id, Iteration: r.iteration, NoTools: noTools, Settings: s}
	opts := workflow.ActivityOptions{
		TaskQueue:           protocol.LLMTaskQueue,
		StartToCloseTimeout: s.LLMTimeout,
		HeartbeatTimeout:    s.LLMHeartbeat,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute,
			MaximumAttempts:        s.LLMMaxAttempts,
			NonRetryableErrorTypes: []string{protocol.ErrProviderNonRetryable, protocol.ErrProviderArrears, protocol.ErrConfig},
		},
		Summary: fmt.Sprintf("llm #%d %s", r.iteration, s.Model),
	}
	var res protocol.LLMCallResult
	err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, opts), protocol.ActivityLLMCall, in).Get(ctx, &res)
	return &res, err
}

// runTools runs one batch: consecutive concurrency-safe calls in parallel,
// every other call alone, in the model's order.
func (r *runner) runTools(ctx workflow.Context, calls []protocol.ToolCallRef) error {
	for i := 0; i < len(calls); {
		j := i + 1
		if calls[i].ConcurrencySafe {
			for j < len(calls) && calls[j].ConcurrencySafe {
				j++
			}
		}
		futures := make([]workflow.Future, 0, j-i)
		for _, c := range calls[i:j] {
			futures = append(futures, r.startTool(ctx, c))
		}
		for k, f := range futures {
			var res protocol.ToolCallResult
			if err := f.Get(ctx, &res); err != nil {
				if isCanceled(err) {
					return err
				}
				return fmt.Errorf("tool %s (%s): %w", calls[i+k].Name, calls[i+k].ID, err)
			}
		}
		i = j
	}
	return nil
}

func (r *runner) startTool(ctx workflow.Context, c protocol.ToolCallRef) workflow.Future {
	s := r.t.in.Settings
	opts := workflow.ActivityOptions{
		TaskQueue:           protocol.TaskQueue,
		StartToCloseTimeout: s.ToolTimeout,
		HeartbeatTimeout:    s.LLMHeartbeat,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 3},
		Summary:             fmt.Sprintf("tool %s(%s)", c.Name, c.ArgsPreview),
	}
	in := protocol.ToolCallInput{SessionKey: r.t.in.SessionKey, Turn: r.t.id, Iteration: r.iteration, CallID: c.ID, Name: c.Name, Heartbeat: s.LLMHeartbeat}
	return workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, opts), protocol.ActivityTool, in)
}

// modelErrorText is what the user is told when the model could not answer.
func modelErrorText(err error, s protocol.Settings) string {
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) {
		if appErr.Type() == protocol.ErrProviderArrears {
			return ArrearsText
		}
		if msg := strings.TrimSpace(appErr.Message()); msg != "" {
			return msg
		}
	}
	var te *temporal.TimeoutError
	if errors.As(err, &te) {
		return fmt.Sprintf("Error calling LLM: timed out after %ds", int(s.LLMTimeout.Seconds()))
	}
	return ModelErrorFallback
}
