package activities

import (
	"context"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/session"
	"github.com/nanobot-durable/nanobot/tools"
)

// OutcomeUnknown is the result of a side-effecting call whose worker died
// after claiming it: acting again could do the effect twice.
const OutcomeUnknown = "Error: outcome unknown: the worker stopped while this tool ran. " +
	"Check whether its effect happened before you try again."

// ErrJournal marks a journal that lacks what the workflow says it holds.
const ErrJournal = "JournalError"

func toolEntryID(callID string) string { return "tool-" + callID }

// ToolCalls runs a turn's tool calls, and journals the results the
// workflow itself produces (spawn's, a failed call's).
type ToolCalls struct {
	journal
	tools          *Toolbox
	streams        *channels.StreamHub
	restrict       bool     // tools.restrictToWorkspace
	private        []string // out of every tool's reach
	maxResultChars int
	exec           *tools.ExecSessions // /stop ends the session's exec sessions
	redactor
}

// ToolCall runs one tool call whose arguments the journal holds (in the
// model's reply), and journals its result; a retry returns that result.
// Its preview and errors have the configured secrets masked.
func (a *ToolCalls) ToolCall(ctx context.Context, in protocol.ToolCallInput) (protocol.ToolCallResult, error) {
	res, err := a.toolCall(ctx, in)
	if m := metricsOf(ctx); m != nil {
		countToolCall(m, in.Name, res, err)
	}
	res.Preview = a.redact(res.Preview)
	return res, paced(ctx, a.redactError(err))
}

func (a *ToolCalls) toolCall(ctx context.Context, in protocol.ToolCallInput) (protocol.ToolCallResult, error) {
	entry := toolEntryID(in.CallID)
	sess, err := a.load(ctx, in.SessionKey)
	if err != nil {
		return protocol.ToolCallResult{}, err
	}
	call, ok := findCall(sess, in)
	if i := sess.Find(in.Turn, entry); i >= 0 {
		res := toolResult(sess.Messages[i].Content, false)
		res.FromJournal = true
		// A retry after the send was journaled must still stop the final reply going twice.
		res.AnsweredOrigin = ok && call.Function.Name == "message" && !strings.HasPrefix(res.Preview, "Error") &&
			tools.MessageAnswersOrigin(in.Route, call.Function.Arguments)
		return res, nil
	}
	if !ok {
		msg := fmt.Sprintf("tool call %s is not in the journal of turn %s", in.CallID, in.Turn)
		return protocol.ToolCallResult{}, temporal.NewNonRetryableApplicationError(msg, ErrJournal, nil)
	}
	policy := a.tools.policy(in.Profile)
	env := tools.Env{
		Workspace: a.tools.workspace, RestrictToWorkspace: a.restrict || policy.Confined(), Private: a.private,
		SessionKey: in.SessionKey, Turn: in.Turn, CallID: in.CallID, Route: in.Route, Policy: policy,
	}
	reg := a.tools.forKind(in.Profile.Kind)
	tool, known := reg.Get(call.Function.Name)
	if !known {
		reg = a.tools.refreshed(ctx, in.Profile.Kind) // an MCP tool this worker has not connected yet
		tool, known = reg.Get(call.Function.Name)
	}
	if err := reg.Permit(policy, call.Function.Name, call.Function.Arguments); err != nil {
		return a.journalToolResult(ctx, in, call, tools.Result{Text: err.Error(), IsError: true}, false) // refused before anything acts
	}
	if !in.Approved && a.tools.ask(ctx, in.Profile, call.Function.Name, call.Function.Arguments) != nil {
		// The workflow asks before it starts such a call; one that reaches here unasked is refused, never run.
		text := fmt.Sprintf("Error: %s needs a person's approval, and this call was not approved", call.Function.Name)
		return a.journalToolResult(ctx, in, call, tools.Result{Text: text, IsError: true}, false)
	}
	env.Approved = in.Approved
	var result tools.Result
	claimed := true
	// A retry-safe call (an exec session's start, write_stdin) skips the claim: its tool dedupes by the call.
	if known && tool.Flags().SideEffects && !reg.RetrySafe(call.Function.Name, call.Function.Arguments) {
		if claimed, err = a.store.Claim(ctx, in.SessionKey, in.Turn, entry); err != nil {
			return protocol.ToolCallResult{}, fmt.Errorf("claim tool call %s: %w", in.CallID, err)
		}
	}
	unknown := !claimed
	if unknown {
		result = tools.Result{Text: OutcomeUnknown, IsError: true}
	} else {
		for _, hint := range in.Hints {
			a.streams.Publish(channels.StreamEvent{SessionKey: in.SessionKey, Route: in.Route, Turn: in.Turn,
				Iteration: in.Iteration, ToolHint: hint})
		}
		result = reg.Execute(ctx, env, call.Function.Name, call.Function.Arguments) // Liveness beats while it runs
		if ctx.Err() != nil {
			// Stopped (/stop, or the worker is going away): a cut-short result is no
			// result. A retry reruns a read-only tool and reports a side effect as unknown.
			return protocol.ToolCallResult{}, temporal.NewApplicationError("tool call interrupted: "+ctx.Err().Error(), "ToolInterrupted")
		}
	}
	return a.journalToolResult(ctx, in, call, result, unknown)
}

// EndExecSessions ends the exec sessions a stopped turn's session started
// (/stop while a turn runs); it returns how many were running.
func (a *ToolCalls) EndExecSessions(ctx context.Context, in protocol.StepInput) (int, error) {
	return a.exec.EndOwned(ctx, in.SessionKey)
}

// ToolResult journals a result the workflow produced for a call (spawn).
func (a *ToolCalls) ToolResult(ctx context.Context, in protocol.ToolResultInput) (protocol.ToolCallResult, error) {
	sess, err := a.load(ctx, in.SessionKey)
	if err != nil {
		return protocol.ToolCallResult{}, err
	}
	if i := sess.Find(in.Turn, toolEntryID(in.CallID)); i >= 0 {
		res := toolResult(sess.Messages[i].Content, in.IsError)
		res.FromJournal = true
		return res, nil
	}
	tc := protocol.ToolCallInput{SessionKey: in.SessionKey, Turn: in.Turn, CallID: in.CallID, Name: in.Name}
	call := chat.ToolCall{ID: in.CallID, Type: "function", Function: chat.FunctionCall{Name: in.Name}}
	return a.journalToolResult(ctx, tc, call, tools.Result{Text: in.Text, IsError: in.IsError}, false)
}

// journalToolResult writes a call's result (within the result budget) into
// the journal and returns what the workflow sees of it. The configured
// secrets are masked first: the journal is what the next model call reads.
func (a *ToolCalls) journalToolResult(ctx context.Context, in protocol.ToolCallInput, call chat.ToolCall, result tools.Result, unknown bool) (protocol.ToolCallResult, error) {
	env := tools.Env{Workspace: a.tools.workspace, SessionKey: in.SessionKey, Turn: in.Turn, CallID: in.CallID}
	entry := toolEntryID(in.CallID)
	text := tools.ApplyResultBudget(env, call.Function.Name, a.redact(result.Text), a.maxResultChars)
	msg := chat.Message{
		Role: chat.RoleTool, ToolCallID: in.CallID, Name: call.Function.Name, Content: text,
		Turn: in.Turn, EntryID: entry, Timestamp: time.Now().Format(session.TimeLayout),
	}
	if _, err := a.store.Append(ctx, in.SessionKey, msg); err != nil {
		return protocol.ToolCallResult{}, fmt.Errorf("journal result of tool call %s: %w", in.CallID, err)
	}
	res := toolResult(text, result.IsError)
	res.Unknown, res.AnsweredOrigin = unknown, result.AnsweredOrigin
	return res, nil
}

func findCall(sess *session.Session, in protocol.ToolCallInput) (chat.ToolCall, bool) {
	i := sess.Find(in.Turn, in.LLMEntry)
	if i < 0 {
		return chat.ToolCall{}, false
	}
	for _, tc := range sess.Messages[i].ToolCalls {
		if tc.ID == in.CallID {
			return tc, true
		}
	}
	return chat.ToolCall{}, false
}

// toolResult is what the workflow gets of a result: a short preview (an
// error's is longer, since it may become the turn's answer); the journal has it all.
func toolResult(text string, isError bool) protocol.ToolCallResult {
	n := protocol.ToolPreviewBytes
	if isError {
		n = protocol.PreviewBytes
	}
	return protocol.ToolCallResult{Preview: chat.Preview(text, n), Chars: len(text), IsError: isError}
}
