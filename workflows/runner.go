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
	// toolFailedText is the result of a call whose activity failed for good.
	toolFailedText = "Error: the %s call could not finish: %s. If it changes things, check whether it did before you try again."
	// toolErrorEndText ends a loop that stops at a tool's error (failOnToolError).
	toolErrorEndText  = "Error: the %s tool failed: %s"
	maxIterationsText = "I reached the maximum number of tool call iterations (%d) without completing the task. You can try breaking the task into smaller steps."
)

// nanobot's runner limits.
const (
	maxEmptyRetries       = 2
	maxLengthRecoveries   = 3
	maxInjectionsPerDrain = 3
	maxInjectionCycles    = 5
	// maxGoalContinuations bounds the prompts to go on with a sustained goal in one turn.
	maxGoalContinuations = 12
	// goalModelTimeout: a goal turn's model calls have no wall-clock limit (nanobot), in practice a day.
	goalModelTimeout = 24 * time.Hour
)

// A run continues as new once its history passes maxRunHistoryBytes, so a
// long turn replays fast on any worker (the server suggests it only at MBs).
const maxRunHistoryBytes = 256 << 10

// loopHost is what the model ⇄ tools loop needs from the workflow running
// it (a turn, a subagent): its rules for this run, an inbox of messages that
// arrived meanwhile, and a say in what an answer means.
type loopHost interface {
	loopConfig() loopConfig
	// waiting is how many messages wait in the inbox.
	waiting() int
	// injectWaiting journals up to max waiting messages as injection cycle
	// `cycle`; false when it could not (they stay for the next turn).
	injectWaiting(ctx workflow.Context, cycle, max int) bool
	// onAnswer shows an answer before injected messages continue the loop.
	onAnswer(ctx workflow.Context)
	// continueAsNew carries the loop into a fresh run when history grew long.
	continueAsNew(ctx workflow.Context) error
	// progress shows an answer the loop goes on from (a sustained goal's round).
	progress(ctx workflow.Context)
	// showApproval delivers an approval request to the chat that is asked.
	showApproval(ctx workflow.Context, req protocol.ApprovalRequest)
	// approvalRoutes are the chats showApproval shows a request in: a chat's answer counts only from one of them.
	approvalRoutes() []protocol.Route
}

// loopConfig fixes who the loop speaks for and by which rules, for one run.
type loopConfig struct {
	SessionKey string
	// OriginKey is the session of the chat asked for approvals (a subagent's origin).
	OriginKey string
	Turn      string
	Route     protocol.Route
	Settings  protocol.Settings
	// Profile is the host's rules on tools, for the model call and the tool call alike.
	Profile protocol.Profile
	// NoFinalize: at the iteration limit, stop with the text instead of one
	// last call without tools (nanobot's subagents).
	NoFinalize bool
	// FailOnToolError: a tool's error ends the loop (agents.defaults.failOnToolError, nanobot's subagents).
	FailOnToolError bool
}

// runner is the model ⇄ tools loop of the RUN state.
type runner struct {
	host loopHost
	cfg  loopConfig
	protocol.RunnerState
	// final is what the loop will say and why it stopped.
	final reply
	// hints are the progress lines of the tools started, for the state query.
	hints []string
	// originAnswered: the message tool sent to the origin chat during this turn.
	originAnswered bool
	// lastCall is the last model call's outcome, shown in the next details.
	lastCall string
	// lastModel is the model that answered last, for the memo.
	lastModel string
	// waitingFor is the approval request the loop waits on, for the state query.
	waitingFor *protocol.ApprovalRequest
}

// toolFinishReasons are the finish reasons under which nanobot runs tool calls.
var toolFinishReasons = map[string]bool{"tool_calls": true, "function_call": true, "stop": true}

// blankTerminal finish reasons end a blank answer at once, without retries.
var blankTerminal = map[string]bool{"refusal": true, "content_filter": true, "error": true}

func (r *runner) execute(ctx workflow.Context) (Event, error) {
	r.cfg = r.host.loopConfig()
	s := r.cfg.Settings
	mode := ""
	for {
		if info := workflow.GetInfo(ctx); info.GetContinueAsNewSuggested() || info.GetCurrentHistorySize() > maxRunHistoryBytes {
			return "", r.host.continueAsNew(ctx)
		}
		if r.Iteration >= s.MaxIterations && r.cfg.NoFinalize {
			r.final = reply{Text: protocol.NoFinalResponseText, StopReason: protocol.StopMaxIterations}
			return EvOK, nil
		}
		if r.Iteration >= s.MaxIterations && mode != protocol.ModeFinalize {
			r.inject(ctx) // nanobot drains the queue before finalizing
			mode = protocol.ModeFinalize
		}
		if mode != protocol.ModeFinalize {
			r.Iteration++
		}
		details := fmt.Sprintf("RUN iteration %d/%d", r.Iteration, s.MaxIterations)
		if r.lastCall != "" {
			details += " · " + r.lastCall
		}
		workflow.SetCurrentDetails(ctx, details)
		res, err := r.callModel(ctx, mode)
		if err != nil {
			if temporal.IsCanceledError(err) {
				return "", err
			}
			r.final = reply{Text: modelErrorText(err, s), StopReason: protocol.StopError}
			if mode != protocol.ModeFinalize && r.inject(ctx) {
				mode = ""
				continue
			}
			return EvOK, nil
		}
		if mode == protocol.ModeFinalize {
			r.final = reply{EntryID: res.EntryID, Text: res.ContentPreview, StopReason: protocol.StopMaxIterations}
			if res.ContentChars == 0 {
				r.final = reply{Text: fmt.Sprintf(maxIterationsText, s.MaxIterations), StopReason: protocol.StopMaxIterations}
			}
			return EvOK, nil
		}
		if mode == protocol.ModeRepeated {
			r.final = reply{EntryID: res.EntryID, Text: res.ContentPreview, StopReason: protocol.StopRepeatedCalls}
			if res.ContentChars == 0 {
				r.final = reply{Text: repeatedEndText, StopReason: protocol.StopRepeatedCalls}
			}
			return EvOK, nil
		}
		next, done, err := r.decide(ctx, res)
		if err != nil || done {
			return EvOK, err
		}
		mode = next
	}
}

// decide applies nanobot's rules to one model reply: run tools, recover, or
// finish. It returns the mode of the next call, or done.
func (r *runner) decide(ctx workflow.Context, res *protocol.LLMCallResult) (string, bool, error) {
	switch {
	case res.FinishReason == "length":
		r.Segments = append(r.Segments, res.EntryID)
		if r.LengthRecoveries < maxLengthRecoveries {
			r.LengthRecoveries++
			return protocol.ModeLength, false, nil
		}
		return r.answer(ctx, res)
	case len(res.ToolCalls) > 0 && toolFinishReasons[res.FinishReason]:
		failure, err := r.runTools(ctx, res)
		if err != nil {
			return "", true, err
		}
		// Runs that began before this rule go on as they did (a tool error is the model's to handle).
		if failure != "" && r.cfg.FailOnToolError && workflow.GetVersion(ctx, "fail-on-tool-error", workflow.DefaultVersion, 1) == 1 {
			r.final = reply{Text: failure, StopReason: protocol.StopToolError}
			return "", true, nil
		}
		r.inject(ctx)
		if r.RepeatStrikes >= repeatStrikesToEnd {
			return protocol.ModeRepeated, false, nil // guided once, repeated again: the turn ends without tools
		}
		return "", false, nil
	case len(res.ToolCalls) == 0 && res.DroppedCalls > 0 && res.ContentChars == 0:
		if !r.MalformedRetried {
			r.MalformedRetried = true
			return protocol.ModeMalformed, false, nil
		}
		return protocol.ModeEmptyRetry, false, nil
	case res.ContentChars == 0 && len(r.Segments) == 0:
		if blankTerminal[res.FinishReason] || r.EmptyRetries >= maxEmptyRetries {
			r.final = reply{Text: protocol.EmptyFinalText, StopReason: protocol.StopEmptyFinal}
			if r.inject(ctx) {
				return "", false, nil
			}
			return "", true, nil
		}
		r.EmptyRetries++
		if r.EmptyRetries == maxEmptyRetries {
			return protocol.ModeEmptyRetry, false, nil
		}
		return "", false, nil // the first blank: a silent retry
	}
	return r.answer(ctx, res)
}

// answer takes a reply as final; messages that arrived meanwhile are
// injected and the loop goes on, after the user has seen this answer.
func (r *runner) answer(ctx workflow.Context, res *protocol.LLMCallResult) (string, bool, error) {
	if len(r.Segments) > 0 && res.FinishReason != "length" {
		r.Segments = append(r.Segments, res.EntryID)
	}
	r.final = reply{EntryID: res.EntryID, Text: res.ContentPreview, StopReason: protocol.StopCompleted, Drawn: res.Drawn}
	if len(r.Segments) > 1 {
		return "", true, nil // a continued reply is joined by SAVE before anyone sees it
	}
	if r.pendingInjections() {
		r.host.onAnswer(ctx)
		if r.host.waiting() == 0 {
			return "", true, nil // what waited was withdrawn while the answer went out: it stands
		}
		r.inject(ctx)
		r.EmptyRetries, r.Segments = 0, nil
		return "", false, nil
	}
	if res.GoalActive && r.GoalContinuations < maxGoalContinuations && r.continueGoal(ctx) {
		r.EmptyRetries, r.Segments = 0, nil
		return "", false, nil
	}
	return "", true, nil
}

// continueGoal shows the answer and journals the prompt to go on with the
// session's active goal; false when that prompt could not be journaled.
func (r *runner) continueGoal(ctx workflow.Context) bool {
	r.GoalContinuations++
	r.host.progress(ctx)
	in := protocol.InjectInput{SessionKey: r.cfg.SessionKey, Turn: r.cfg.Turn, Cycle: r.GoalContinuations, GoalContinue: true}
	if err := workflow.ExecuteLocalActivity(localCtx(ctx, "continue the goal"), protocol.ActivityInject, in).Get(ctx, nil); err != nil {
		workflow.GetLogger(ctx).Error("journaling the goal prompt failed; the turn ends here", "error", err)
		return false
	}
	return true
}

func (r *runner) pendingInjections() bool {
	return r.InjectionCycles < maxInjectionCycles && r.host.waiting() > 0
}

// inject has the host journal up to three waiting messages as one user
// message; at most five times per turn. It reports whether it injected anything.
func (r *runner) inject(ctx workflow.Context) bool {
	if !r.pendingInjections() {
		return false
	}
	r.InjectionCycles++
	return r.host.injectWaiting(ctx, r.InjectionCycles, maxInjectionsPerDrain)
}

func (r *runner) callModel(ctx workflow.Context, mode string) (*protocol.LLMCallResult, error) {
	s := r.cfg.Settings
	if r.cfg.Profile.Goal {
		s.LLMTimeout = goalModelTimeout
	}
	r.Calls++
	in := protocol.LLMCallInput{
		SessionKey: r.cfg.SessionKey, Turn: r.cfg.Turn, Iteration: r.Iteration, Call: r.Calls, Mode: mode,
		Settings: s, Route: r.cfg.Route, Profile: r.cfg.Profile,
	}
	summary := fmt.Sprintf("llm #%d %s", r.Iteration, s.Model)
	if mode != "" {
		summary += " (" + mode + ")"
	}
	var res protocol.LLMCallResult
	err := executeModelCall(ctx, s, summary, in, &res)
	workflow.GetMetricsHandler(ctx).Counter(protocol.MetricIterations).Inc(1)
	r.lastCall = callOutcome(summary, &res, err)
	if res.Model != "" {
		r.lastModel = res.Model
	}
	r.PromptTokens += res.PromptTokens
	r.CompletionTokens += res.CompletionTokens
	r.CachedTokens += res.CachedTokens
	return &res, err
}

// callOutcome is a model call's summary once it returned:
// "llm #3 gpt-4o → 2 tool calls, 1.2k tokens".
func callOutcome(summary string, res *protocol.LLMCallResult, err error) string {
	if err != nil {
		return summary + " → failed"
	}
	what := "answer"
	switch n := len(res.ToolCalls); {
	case n == 1:
		what = "1 tool call"
	case n > 1:
		what = fmt.Sprintf("%d tool calls", n)
	case res.FinishReason != "" && res.FinishReason != "stop":
		what = res.FinishReason
	}
	return fmt.Sprintf("%s → %s, %s tokens", summary, what, protocol.CompactTokens(res.PromptTokens+res.CompletionTokens))
}

// modelCallOnTurnQueue marks runs whose model calls go to the turn's own
// queue first; older runs send every call to protocol.LLMTaskQueue.
const modelCallOnTurnQueue = "model-call-on-turn-queue"

// executeModelCall asks on the workflow's own queue, where the call is
// dispatched with the workflow task instead of waiting for a poller, and
// asks the same call again on protocol.LLMTaskQueue when that worker had no
// free model-call slot (protocol.ErrBusy).
func executeModelCall(ctx workflow.Context, s protocol.Settings, summary string, in protocol.LLMCallInput, res *protocol.LLMCallResult) error {
	if workflow.GetVersion(ctx, modelCallOnTurnQueue, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return workflow.ExecuteActivity(llmCtx(ctx, s, summary, instanceOf(ctx).LLMTaskQueue()), protocol.ActivityLLMCall, in).Get(ctx, res)
	}
	in.Settings = in.Settings.ForModelCall()
	err := workflow.ExecuteActivity(llmCtx(ctx, s, summary, workflow.GetInfo(ctx).TaskQueueName), protocol.ActivityLLMCall, in).Get(ctx, res)
	if !isAppError(err, protocol.ErrBusy) {
		return err
	}
	return workflow.ExecuteActivity(llmCtx(ctx, s, summary+" (queued)", instanceOf(ctx).LLMTaskQueue()), protocol.ActivityLLMCall, in).Get(ctx, res)
}

// isAppError tells whether err is an activity's application error of type kind.
func isAppError(err error, kind string) bool {
	var app *temporal.ApplicationError
	return errors.As(err, &app) && app.Type() == kind
}

func llmCtx(ctx workflow.Context, s protocol.Settings, summary, queue string) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           queue,
		StartToCloseTimeout: s.LLMTimeout,
		HeartbeatTimeout:    s.LLMHeartbeat,
		// A timed-out attempt (its worker gone) retries at once; the call's own errors wait protocol.ErrorBackoff.
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: protocol.RetryAtOnce, BackoffCoefficient: 2, MaximumInterval: time.Minute,
			MaximumAttempts:        s.LLMMaxAttempts,
			NonRetryableErrorTypes: []string{protocol.ErrProviderNonRetryable, protocol.ErrProviderArrears, protocol.ErrConfig},
		},
		Summary: summary,
	})
}

// runTools runs one batch: consecutive concurrency-safe calls in parallel,
// every other call alone, in the model's order. failure is the first
// tool error, as the loop's answer when errors end it.
func (r *runner) runTools(ctx workflow.Context, res *protocol.LLMCallResult) (failure string, err error) {
	calls := res.ToolCalls
	for i := 0; i < len(calls); {
		j := i + 1
		if calls[i].ConcurrencySafe {
			for j < len(calls) && calls[j].ConcurrencySafe {
				j++
			}
		}
		batch := calls[i:j]
		futures := make([]workflow.Future, 0, len(batch))
		for k, c := range batch {
			var shows []string // the first call of a batch shows all its lines, in the model's order
			if k == 0 {
				shows = batchHints(batch)
			}
			f, err := r.gateTool(ctx, c, res.EntryID, shows)
			if err != nil {
				return "", err
			}
			futures = append(futures, f)
		}
		for k, f := range futures {
			var out protocol.ToolCallResult
			if err := f.Get(ctx, &out); err != nil {
				if temporal.IsCanceledError(err) {
					return "", err
				}
				// A call that could not finish (its worker, its journal) is the model's result, as a tool's own error is.
				c := calls[i+k]
				text := fmt.Sprintf(toolFailedText, c.Name, FailureReason(err))
				if out, err = r.toolResult(ctx, c, text, true); err != nil {
					return "", fmt.Errorf("journal the failure of tool %s (%s): %w", c.Name, c.ID, err)
				}
			}
			r.originAnswered = r.originAnswered || out.AnsweredOrigin
			if out.IsError && failure == "" {
				failure = fmt.Sprintf(toolErrorEndText, calls[i+k].Name, out.Preview)
			}
		}
		i = j
	}
	return failure, nil
}

// batchHints are the progress lines of a batch's calls, in the model's order.
func batchHints(batch []protocol.ToolCallRef) []string {
	var out []string
	for _, c := range batch {
		if c.Hint != "" {
			out = append(out, c.Hint)
		}
	}
	return out
}

func (r *runner) startTool(ctx workflow.Context, c protocol.ToolCallRef, llmEntry string, hints []string, approved bool) workflow.Future {
	s := r.cfg.Settings
	if c.Hint != "" {
		r.hints = append(r.hints, c.Hint)
	}
	if sp, ok := r.host.(spawner); ok && c.Name == "spawn" {
		return sp.spawn(ctx, c, llmEntry)
	}
	opts := workflow.ActivityOptions{
		TaskQueue:           workspaceQueue(ctx, s),
		StartToCloseTimeout: s.ToolTimeout,
		HeartbeatTimeout:    s.LLMHeartbeat,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: protocol.RetryAtOnce, MaximumAttempts: 3},
		Summary:             toolSummary(c),
	}
	in := protocol.ToolCallInput{
		SessionKey: r.cfg.SessionKey, Turn: r.cfg.Turn, Iteration: r.Iteration, CallID: c.ID, Name: c.Name,
		LLMEntry: llmEntry, Route: r.cfg.Route, Profile: r.cfg.Profile, Hints: hints,
		Approved: approved,
	}
	return workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, opts), protocol.ActivityTool, in)
}

// toolResult journals a result the workflow itself produced for a call.
func (r *runner) toolResult(ctx workflow.Context, c protocol.ToolCallRef, text string, isError bool) (protocol.ToolCallResult, error) {
	in := protocol.ToolResultInput{SessionKey: r.cfg.SessionKey, Turn: r.cfg.Turn, CallID: c.ID, Name: c.Name, Text: text, IsError: isError}
	var res protocol.ToolCallResult
	err := workflow.ExecuteLocalActivity(localCtx(ctx, "result of "+c.Name), protocol.ActivityToolResult, in).Get(ctx, &res)
	return res, err
}

// toolSummary names a tool call in the Web UI: "tool read_file path=README.md".
func toolSummary(c protocol.ToolCallRef) string {
	if c.Summary != "" {
		return "tool " + c.Name + " " + c.Summary
	}
	return "tool " + c.Name
}

// modelErrorText is what the user is told when the model could not answer.
func modelErrorText(err error, s protocol.Settings) string {
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) {
		if appErr.Type() == protocol.ErrProviderArrears {
			return protocol.ArrearsText
		}
		if msg := strings.TrimSpace(appErr.Message()); msg != "" {
			return msg
		}
	}
	var te *temporal.TimeoutError
	if errors.As(err, &te) {
		return fmt.Sprintf("Error calling LLM: timed out after %ds", int(s.LLMTimeout.Seconds()))
	}
	return protocol.ModelErrorFallback
}
