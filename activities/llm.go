package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/cliapps"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/governance"
	"github.com/nanobot-durable/nanobot/prompt"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers"
	"github.com/nanobot-durable/nanobot/session"
	"github.com/nanobot-durable/nanobot/tokens"
	"github.com/nanobot-durable/nanobot/tools"
	"github.com/nanobot-durable/nanobot/usage"
)

// minHistoryBudget is what history keeps even when tools eat the budget.
const minHistoryBudget = 256

// llmEntryID names the journal entry of one model call.
func llmEntryID(call int) string { return "llm-" + strconv.Itoa(call) }

// ModelCall is one model iteration of a turn or a subagent.
type ModelCall struct {
	journal
	models  ModelSource
	tools   *Toolbox
	streams *channels.StreamHub
	usage   usageLog
	redactor
	config         func() *config.Config // the hint length
	maxResultChars int
	log            *slog.Logger
	slots          modelSlots // shared by LLMCall and LLMCallNow
}

// LLMCall runs one model iteration from protocol.LLMTaskQueue, once one of
// the process's model-call slots is free (the queue's worker slots already
// cap it; the calls LLMCallNow runs hold slots too). The prompt is rebuilt
// from the journal; a reply that is already journaled is returned without
// asking the model. What goes back to the workflow has the configured
// secrets masked.
func (a *ModelCall) LLMCall(ctx context.Context, in protocol.LLMCallInput) (protocol.LLMCallResult, error) {
	if err := a.slots.wait(ctx); err != nil { // Liveness beats while it waits
		return protocol.LLMCallResult{}, temporal.NewApplicationError("model call interrupted while waiting for a slot: "+err.Error(), protocol.ErrProviderRetryable)
	}
	defer a.slots.release()
	return a.run(ctx, in)
}

// LLMCallNow runs one model iteration on the turn's own queue, where it is
// dispatched with the workflow task that scheduled it, when a slot is free
// at once; otherwise it fails with protocol.ErrBusy (not retried) and the
// workflow asks again on protocol.LLMTaskQueue.
func (a *ModelCall) LLMCallNow(ctx context.Context, in protocol.LLMCallInput) (protocol.LLMCallResult, error) {
	if !a.slots.try() {
		return protocol.LLMCallResult{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("every model-call slot of this worker is taken (%d)", cap(a.slots)), protocol.ErrBusy, nil)
	}
	defer a.slots.release()
	return a.run(ctx, in)
}

func (a *ModelCall) run(ctx context.Context, in protocol.LLMCallInput) (protocol.LLMCallResult, error) {
	started := time.Now()
	res, err := a.llmCall(ctx, in)
	if m := metricsOf(ctx); m != nil {
		countModelCall(m, in.Settings.Model, res, err, time.Since(started))
	}
	return a.redactLLM(res), paced(ctx, a.redactError(err))
}

func (a *ModelCall) llmCall(ctx context.Context, in protocol.LLMCallInput) (protocol.LLMCallResult, error) {
	entry := llmEntryID(in.Call)
	sess, err := a.load(ctx, in.SessionKey)
	if err != nil {
		return protocol.LLMCallResult{}, err
	}
	if i := sess.Find(in.Turn, entry); i >= 0 {
		res := a.resultFrom(ctx, sess.Messages[i], in)
		res.GoalActive = goalIsActive(sess)
		res.FromJournal = true
		return res, nil
	}
	model, err := a.models.Model(in.Settings.Model)
	if err != nil {
		return protocol.LLMCallResult{}, temporal.NewNonRetryableApplicationError(err.Error(), protocol.ErrConfig, err)
	}
	req, err := a.request(ctx, sess, in, model)
	if err != nil {
		return protocol.LLMCallResult{}, err
	}

	info := activity.GetInfo(ctx)
	var onDelta func(providers.Delta)
	if req.Stream {
		if info.Attempt > 1 {
			a.streams.Publish(channels.StreamEvent{SessionKey: in.SessionKey, Route: in.Route, Turn: in.Turn, Iteration: in.Iteration, Reset: true})
		}
		onDelta = func(d providers.Delta) {
			beatOnProgress(ctx)
			a.streams.Publish(channels.StreamEvent{SessionKey: in.SessionKey, Route: in.Route, Turn: in.Turn, Iteration: in.Iteration, Delta: d.Content, Reasoning: d.Reasoning})
		}
	}
	started := time.Now()
	resp, err := model.Provider.Chat(ctx, req, onDelta)
	if err != nil && providers.RefusesImages(err) {
		if stripped, ok := withoutImages(req.Messages); ok {
			a.log.Warn("the model takes no images; asking again with them as text", "session", in.SessionKey, "model", in.Settings.Model, "error", err)
			req.Messages = stripped
			resp, err = model.Provider.Chat(ctx, req, onDelta)
		}
	}
	if req.Stream {
		a.streams.Publish(channels.StreamEvent{SessionKey: in.SessionKey, Route: in.Route, Turn: in.Turn, Iteration: in.Iteration, End: true})
	}
	if err != nil {
		if ctx.Err() != nil {
			// The worker is stopping (or the turn was stopped): another attempt, elsewhere, must ask again.
			return protocol.LLMCallResult{}, temporal.NewApplicationError("model call interrupted: "+ctx.Err().Error(), protocol.ErrProviderRetryable)
		}
		return protocol.LLMCallResult{}, modelError(err)
	}
	calls, dropped := wellFormedCalls(resp.ToolCalls)
	msg := chat.Message{
		Role: chat.RoleAssistant, Content: resp.Content, ReasoningContent: resp.ReasoningContent,
		ThinkingBlocks: resp.ThinkingBlocks, ToolCalls: calls, FinishReason: resp.FinishReason,
		LatencyMS: time.Since(started).Milliseconds(), Turn: in.Turn, EntryID: entry,
	}
	if _, err := a.store.Append(ctx, in.SessionKey, msg); err != nil {
		return protocol.LLMCallResult{}, fmt.Errorf("journal model reply: %w", err)
	}
	res := a.resultFrom(ctx, msg, in)
	res.GoalActive = goalIsActive(sess)
	res.DroppedCalls = dropped
	if resp.Model != "" {
		res.Model = resp.Model // the model that answered: a fallback shows here
	}
	res.PromptTokens, res.CompletionTokens, res.CachedTokens = resp.Usage.PromptTokens, resp.Usage.CompletionTokens, resp.Usage.CachedTokens
	estimated := res.PromptTokens == 0 && res.CompletionTokens == 0
	if estimated { // the provider reported no usage: count it
		count := tokens.For(in.Settings.Model)
		res.PromptTokens = count.Messages(req.Messages) + count.Tools(req.Tools)
		res.CompletionTokens = count.Message(msg) - count.Message(chat.Message{Role: msg.Role})
	}
	a.recordUsage(in, entry, res, resp, estimated)
	if req.Stream && len(calls) == 0 {
		res.Drawn = a.streams.Drawn(in.Route, in.Turn, in.Iteration) // a candidate answer: where it shows
	}
	a.log.Info("model replied", "session", in.SessionKey, "iteration", in.Iteration, "model", res.Model,
		"provider", resp.Provider, "fell_back", resp.FellBack,
		"tool_calls", len(msg.ToolCalls), "finish", resp.FinishReason, "chars", len(msg.Content))
	return res, nil
}

// recordUsage adds the call to the usage file. (turn, entry) is the key, so a
// retried call is counted once; a failure to record never fails the turn.
func (a *ModelCall) recordUsage(in protocol.LLMCallInput, entry string, res protocol.LLMCallResult, resp *providers.Response, estimated bool) {
	rec := usage.Record{
		Time: time.Now().UTC(), Session: in.SessionKey, Turn: in.Turn, Call: entry, Model: res.Model, Provider: resp.Provider,
		Prompt: res.PromptTokens, Completion: res.CompletionTokens, Cached: res.CachedTokens, CacheWrite: resp.Usage.CacheWriteTokens,
		Estimated: estimated,
	}
	rec.Kind = usage.TurnKind(in.Profile.Kind)
	a.usage.add(rec)
}

// sideCallUsage is what a model call outside the runner (a summary, a
// decision) cost: rec names the call; the answering model and the tokens
// are taken from resp, or counted here when the provider reported none.
func sideCallUsage(rec usage.Record, req providers.Request, resp *providers.Response) usage.Record {
	rec.Time, rec.Provider = time.Now().UTC(), resp.Provider
	configured := rec.Model
	if resp.Model != "" {
		rec.Model = resp.Model // the model that answered: a fallback shows here
	}
	rec.Prompt, rec.Completion, rec.Cached = resp.Usage.PromptTokens, resp.Usage.CompletionTokens, resp.Usage.CachedTokens
	rec.CacheWrite = resp.Usage.CacheWriteTokens
	if rec.Prompt == 0 && rec.Completion == 0 { // the provider reported no usage: count it
		count := tokens.For(configured)
		rec.Prompt = count.Messages(req.Messages) + count.Tools(req.Tools)
		rec.Completion = count.Text(resp.Content)
		rec.Estimated = true
	}
	return rec
}

// request rebuilds the prompt: the turn's system prompt, the replayable
// history and the runtime context after the user's text.
func (a *ModelCall) request(ctx context.Context, sess *session.Session, in protocol.LLMCallInput, model Model) (providers.Request, error) {
	system, err := a.store.TurnData(ctx, in.SessionKey, in.Turn, "system")
	if err == nil && len(system) == 0 {
		err = errors.New("the file is empty (the machine crashed after BUILD?)") // an unsynced write the crash rolled back
	}
	if err != nil {
		return providers.Request{}, fmt.Errorf("turn %s has no system prompt (BUILD did not run?): %w", in.Turn, err)
	}
	count := tokens.For(in.Settings.Model)
	var defs []chat.ToolDefinition
	if _, quiet := recoveryPrompt(in.Mode, nil); !quiet {
		all, err := a.tools.offered(ctx, a.journal, in)
		if err != nil {
			return providers.Request{}, err
		}
		defs = a.tools.policy(in.Profile).WithActiveGoal(goalIsActive(sess)).Offer(all)
	}
	// The tool definitions travel with every request: they come out of the budget.
	budget := max(inputBudget(in.Settings)-count.Tools(defs), minHistoryBudget)
	if limit := in.Settings.ContextBlockLimit; limit > 0 {
		budget = min(budget, limit) // agents.defaults.contextBlockLimit: the messages' own budget
	}
	history := sess.History(budget, func(m chat.Message) int { return count.Message(prompt.WithMessageTime(m)) })
	msgs := make([]chat.Message, 0, len(history)+1)
	msgs = append(msgs, chat.Message{Role: chat.RoleSystem, Content: string(system)})
	for _, m := range history {
		var apps []string
		if m.Turn == in.Turn && m.EntryID == "user" {
			apps = a.cliAppMentions(m.Content)
		}
		msgs = append(msgs, replayed(m, in.Turn, in.Route, in.Settings.Timezone, apps...))
	}
	if prompt, _ := recoveryPrompt(in.Mode, msgs); prompt != "" {
		msgs = append(msgs, chat.Message{Role: chat.RoleUser, Content: prompt})
	}
	msgs = governance.Prepare(msgs, governance.Options{
		Budget: budget, MaxToolResultChars: a.maxResultChars, Count: count.Message,
	})
	return providers.Request{
		Model: model.APIModel, Messages: msgs, MaxTokens: in.Settings.MaxTokens,
		Temperature: model.Temperature, Stream: in.Settings.Stream, Tools: defs,
	}, nil
}

// replayed is a journaled message as the model sees it: this turn's user
// message with the runtime context after it (the time the message was
// journaled, so every call and retry of the turn sends the same bytes),
// earlier user messages stamped with their time.
func replayed(m chat.Message, turn string, route protocol.Route, timezone string, extra ...string) chat.Message {
	if m.Turn != turn || m.EntryID != "user" {
		return prompt.WithMessageTime(m)
	}
	at, ok := session.MessageTime(m.Timestamp)
	if !ok {
		at = time.Now()
	}
	rc := prompt.RuntimeContext(route.Channel, route.ChatID, at, timezone, extra...)
	if len(m.ContentParts) == 0 {
		m.Content += "\n\n" + rc
	} else {
		m.ContentParts = withTextPart(m.ContentParts, rc)
	}
	return m
}

// cliAppMentions are the runtime-context lines for the installed CLI apps a
// user message names as @app (none when tools.cliApps is off).
func (a *ModelCall) cliAppMentions(text string) []string {
	if a.config == nil || !strings.Contains(text, "@") {
		return nil
	}
	cfg := a.config()
	if cfg == nil || !cfg.Tools.CLIApps.Enable {
		return nil
	}
	return cliapps.ForConfig(cfg).MentionLines(text)
}

func (a *ModelCall) resultFrom(ctx context.Context, m chat.Message, in protocol.LLMCallInput) protocol.LLMCallResult {
	res := protocol.LLMCallResult{
		EntryID: m.EntryID, ContentPreview: chat.Preview(m.Content, protocol.PreviewBytes), ContentChars: len(m.Content),
		FinishReason: m.FinishReason, Model: in.Settings.Model,
	}
	for _, tc := range m.ToolCalls {
		ref := protocol.ToolCallRef{
			ID: tc.ID, Name: tc.Function.Name, ArgsPreview: chat.Preview(tc.Function.Arguments, 120),
			Hint:    tools.Hint(tc.Function.Name, tc.Function.Arguments, toolHintMax(a.config)),
			Summary: toolSummaryArg(tc.Function.Arguments),
		}
		if t, ok := a.tools.forKind(in.Profile.Kind).Get(tc.Function.Name); ok {
			ref.ConcurrencySafe = t.Flags().ConcurrencySafe()
		}
		ref.Signature = callSignature(tc.Function.Name, tc.Function.Arguments)
		if ref.Ask = a.tools.ask(ctx, in.Profile, tc.Function.Name, tc.Function.Arguments); ref.Ask != nil {
			ref.ConcurrencySafe = false // a call that waits for a person runs alone
		}
		res.ToolCalls = append(res.ToolCalls, ref)
	}
	return res
}

// callSignature names a call by its tool and arguments (as JSON, keys
// sorted), for the repeated-call guard: the same call spelt with other
// spacing or key order is the same call.
func callSignature(name, argsJSON string) string {
	canonical := argsJSON
	var v any
	if json.Unmarshal([]byte(argsJSON), &v) == nil {
		if b, err := json.Marshal(v); err == nil {
			canonical = string(b)
		}
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(name + "\x00" + canonical))
	return fmt.Sprintf("%s:%016x", name, h.Sum64())
}

// toolSummaryArg is the argument that says most about a call, for the
// activity's summary in the Web UI ("path=README.md").
func toolSummaryArg(argsJSON string) string {
	k, v := tools.KeyArg(argsJSON)
	if k == "" {
		return ""
	}
	return k + "=" + chat.Preview(strings.Join(strings.Fields(v), " "), 80)
}

// modelError turns a provider failure into a typed activity error: the
// workflow's retry policy reads the type, Retry-After sets the next delay.
func modelError(err error) error {
	var pe *providers.Error
	if !errors.As(err, &pe) {
		pe = providers.Classify(err)
	}
	// A provider may echo the key back; neither history nor the reply may hold it.
	msg := providers.Redact(pe.Error())
	err = errors.New(providers.Redact(err.Error()))
	switch pe.Class {
	case providers.ClassArrears:
		return temporal.NewNonRetryableApplicationError(msg, protocol.ErrProviderArrears, err)
	case providers.ClassNonRetryable:
		return temporal.NewNonRetryableApplicationError(msg, protocol.ErrProviderNonRetryable, err)
	default:
		return temporal.NewApplicationErrorWithOptions(msg, protocol.ErrProviderRetryable,
			temporal.ApplicationErrorOptions{NextRetryDelay: pe.RetryAfter, Cause: err})
	}
}

// wellFormedCalls drops tool calls without a name (nanobot strips them) and
// fills the type; it returns how many it dropped.
func wellFormedCalls(calls []chat.ToolCall) ([]chat.ToolCall, int) {
	var out []chat.ToolCall
	for _, c := range calls {
		if strings.TrimSpace(c.Function.Name) == "" {
			continue
		}
		if c.Type == "" {
			c.Type = "function"
		}
		out = append(out, c)
	}
	return out, len(calls) - len(out)
}

// toolHintMax is agents.defaults.toolHintMaxLength (nanobot: 40).
func toolHintMax(cfg func() *config.Config) int {
	if n := currentConfig(cfg).Agents.Defaults.ToolHintMaxLength; n > 0 {
		return n
	}
	return config.Default().Agents.Defaults.ToolHintMaxLength
}
