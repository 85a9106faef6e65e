package providers

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/nanobot-durable/nanobot/chat"
)

// AnthropicOptions configures a Messages API endpoint (Anthropic, or a
// provider that speaks its dialect: Kimi Coding, MiniMax's Anthropic API).
type AnthropicOptions struct {
	BaseURL      string // e.g. https://api.anthropic.com/v1; a trailing /v1 is the SDK's own
	APIKey       string // sent as x-api-key; empty sends none
	ExtraHeaders map[string]string
	ExtraQuery   map[string]string
	HTTPClient   *http.Client
	// Timeout and StreamIdleTimeout mean what they mean in OpenAIOptions.
	Timeout           time.Duration
	StreamIdleTimeout time.Duration
	// PromptCaching puts cache_control breakpoints on the system prompt, the
	// tools and the history (nanobot does so for every Anthropic backend).
	PromptCaching bool
}

// Anthropic is a Provider for Anthropic's Messages API, over the official
// SDK's message service alone (its whole client would link every beta API
// in: 13 MB more).
type Anthropic struct {
	opts     AnthropicOptions
	messages anthropic.MessageService
}

var _ Provider = (*Anthropic)(nil)

// NewAnthropic builds a provider; it does no network I/O. The SDK's own
// retries are off (the activity retries) and it reads nothing from the
// environment: the key and base come from the resolved config.
func NewAnthropic(opts AnthropicOptions) *Anthropic {
	var next interface {
		Do(*http.Request) (*http.Response, error)
	} = opts.HTTPClient
	if opts.HTTPClient == nil {
		next = &http.Client{}
	}
	copts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithBaseURL(anthropicBase(opts.BaseURL)),
		option.WithHTTPClient(&doer{next: next, headers: opts.ExtraHeaders, query: opts.ExtraQuery}),
		option.WithMaxRetries(0),
	}
	if opts.APIKey != "" {
		// x-api-key, the header every Messages API server takes (this SDK's
		// WithAPIKey sends a bearer token, which compatible servers may not).
		copts = append(copts, option.WithHeader("x-api-key", opts.APIKey))
	}
	return &Anthropic{opts: opts, messages: anthropic.NewMessageService(copts...)}
}

// anthropicBase drops the /v1 the SDK adds to every path itself.
func anthropicBase(base string) string {
	base = strings.TrimRight(strings.TrimSpace(base), "/")
	if base == "" {
		return "https://api.anthropic.com/"
	}
	return strings.TrimSuffix(base, "/v1") + "/"
}

// Chat implements Provider.
func (c *Anthropic) Chat(ctx context.Context, req Request, onDelta func(Delta)) (*Response, error) {
	params, st, err := c.params(req)
	if err != nil {
		return nil, Classify(err)
	}
	if req.Stream {
		return c.stream(ctx, params, st, onDelta)
	}
	return c.complete(ctx, params, st)
}

// params builds the Messages request; the temperature and ExtraBody go
// through the doer, since the SDK has no temperature field.
func (c *Anthropic) params(req Request) (anthropic.MessageNewParams, *callState, error) {
	prompt, err := toAnthropicPrompt(req)
	if err != nil {
		return anthropic.MessageNewParams{}, nil, err
	}
	if c.opts.PromptCaching {
		markCacheBreakpoints(&prompt)
	}
	s := anthropicThinking(req.Model, req.ReasoningEffort, req.MaxTokens, req.Temperature)
	params := anthropic.MessageNewParams{
		Model: anthropic.Model(req.Model), MaxTokens: s.maxTokens, System: prompt.system,
		Thinking: s.thinking, OutputConfig: s.output,
	}
	for _, t := range prompt.turns {
		if t.role == chat.RoleAssistant {
			params.Messages = append(params.Messages, anthropic.NewAssistantMessage(t.blocks...))
		} else {
			params.Messages = append(params.Messages, anthropic.NewUserMessage(t.blocks...))
		}
	}
	if len(prompt.tools) > 0 {
		params.Tools = prompt.tools
		params.ToolChoice = anthropicToolChoice(req.ToolChoice, s.thinkingOn)
	}
	st := &callState{set: map[string]any{}, extra: req.ExtraBody}
	if s.temperature != nil {
		st.set["temperature"] = *s.temperature
	}
	return params, st, nil
}

func (c *Anthropic) complete(ctx context.Context, params anthropic.MessageNewParams, st *callState) (*Response, error) {
	// The SDK refuses a non-streamed call it expects to exceed 10 minutes
	// unless told the timeout; ours (or none) is the one that holds.
	limit := 24 * time.Hour
	if c.opts.Timeout > 0 {
		limit = c.opts.Timeout
	}
	ctx, cancel := callLimit(ctx, c.opts.Timeout)
	defer cancel()
	msg, err := c.messages.New(withCallState(ctx, st), params, option.WithRequestTimeout(limit))
	if err != nil {
		return nil, failure(ctx, st, err)
	}
	return fromAnthropicMessage(msg), nil
}

func (c *Anthropic) stream(ctx context.Context, params anthropic.MessageNewParams, st *callState, onDelta func(Delta)) (*Response, error) {
	ctx, stop := streamLimits(ctx, c.opts.Timeout, c.opts.StreamIdleTimeout, st)
	defer stop()
	s := c.messages.NewStreaming(withCallState(ctx, st), params)
	defer s.Close()
	var msg anthropic.Message
	out := &deltaSink{onDelta: onDelta}
	stopped := false
	for s.Next() {
		ev := s.Current()
		stopped = stopped || ev.Type == "message_stop"
		if err := msg.Accumulate(ev); err != nil {
			return nil, &Error{Kind: KindMalformed, Message: "decode stream event: " + err.Error(), Class: ClassRetryable, Err: err}
		}
		if ev.Type == "content_block_delta" {
			switch ev.Delta.Type {
			case "text_delta":
				out.text(ev.Delta.Text)
			case "thinking_delta":
				out.emit(Delta{Reasoning: ev.Delta.Thinking})
			}
		}
	}
	if err := s.Err(); err != nil {
		return nil, failure(ctx, st, err)
	}
	if !stopped { // a cut stream: the answer so far is not the answer
		return nil, &Error{Kind: KindMalformed, Message: "stream ended before message_stop", Class: ClassRetryable}
	}
	out.flush()
	return fromAnthropicMessage(&msg), nil
}

// deltaSink forwards streamed text through the think-tag splitter, as the
// chat-completions stream does.
type deltaSink struct {
	onDelta func(Delta)
	split   thinkSplitter
}

func (d *deltaSink) text(s string) {
	visible, thought := d.split.feed(s)
	d.emit(Delta{Reasoning: thought})
	d.emit(Delta{Content: visible})
}

func (d *deltaSink) flush() {
	visible, thought := d.split.flush()
	d.emit(Delta{Reasoning: thought})
	d.emit(Delta{Content: visible})
}

func (d *deltaSink) emit(delta Delta) {
	if d.onDelta != nil && (delta.Content != "" || delta.Reasoning != "") {
		d.onDelta(delta)
	}
}

// anthropicStops maps stop reasons onto the finish reasons the runner reads.
var anthropicStops = map[anthropic.StopReason]string{
	anthropic.StopReasonEndTurn:                    FinishStop,
	anthropic.StopReasonStopSequence:               FinishStop,
	anthropic.StopReasonPauseTurn:                  FinishStop,
	anthropic.StopReasonToolUse:                    FinishToolCalls,
	anthropic.StopReasonMaxTokens:                  FinishLength,
	anthropic.StopReasonModelContextWindowExceeded: FinishLength,
	anthropic.StopReasonRefusal:                    FinishContentFilter,
}

// fromAnthropicMessage reads text, tool calls, thinking (kept with its
// signatures for the next call) and usage, where prompt tokens count the
// cached and cache-written ones too, as nanobot does.
func fromAnthropicMessage(msg *anthropic.Message) *Response {
	var text, reasoning strings.Builder
	var calls []chat.ToolCall
	var thinking []thinkingBlock
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "tool_use":
			calls = append(calls, chat.ToolCall{ID: b.ID, Type: "function",
				Function: chat.FunctionCall{Name: b.Name, Arguments: string(argumentsObject(string(b.Input)))}})
		case "thinking":
			if reasoning.Len() > 0 {
				reasoning.WriteString("\n")
			}
			reasoning.WriteString(b.Thinking)
			thinking = append(thinking, thinkingBlock{Type: "thinking", Thinking: b.Thinking, Signature: b.Signature})
		case "redacted_thinking":
			thinking = append(thinking, thinkingBlock{Type: "redacted_thinking", Data: b.Data})
		}
	}
	finish, ok := anthropicStops[msg.StopReason]
	if !ok {
		finish = string(msg.StopReason)
	}
	u := msg.Usage
	prompt := int(u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens)
	usage := Usage{
		PromptTokens: prompt, CompletionTokens: int(u.OutputTokens), TotalTokens: prompt + int(u.OutputTokens),
		CachedTokens: int(u.CacheReadInputTokens), CacheWriteTokens: int(u.CacheCreationInputTokens),
	}
	resp := buildResponse(text.String(), reasoning.String(), calls, finish, usage, string(msg.Model))
	if len(thinking) > 0 {
		resp.ThinkingBlocks, _ = json.Marshal(thinking)
	}
	return resp
}

// Anthropic error types by the status they stand for, for errors that come
// as a stream event after a 200.
var anthropicErrorStatus = map[string]int{
	"invalid_request_error": http.StatusBadRequest,
	"authentication_error":  http.StatusUnauthorized,
	"billing_error":         http.StatusPaymentRequired,
	"permission_error":      http.StatusForbidden,
	"not_found_error":       http.StatusNotFound,
	"request_too_large":     http.StatusRequestEntityTooLarge,
	"rate_limit_error":      http.StatusTooManyRequests,
	"timeout_error":         http.StatusGatewayTimeout,
	"api_error":             http.StatusInternalServerError,
	"overloaded_error":      529,
}

// describeAnthropic fills e from the SDK's API error; false when err is not one.
func describeAnthropic(err error, e *Error) bool {
	var aerr *anthropic.Error
	if !errors.As(err, &aerr) {
		return false
	}
	e.Status, e.Type, e.Message = aerr.StatusCode, string(aerr.Type()), aerr.Message
	e.Code = aerr.Details.ErrorCode
	if e.Status < 400 {
		e.Status = anthropicErrorStatus[e.Type]
	}
	if aerr.Response != nil && aerr.StatusCode >= 400 {
		e.applyHeaders(aerr.Response.Header)
	}
	if e.Message == "" {
		e.Message = strings.TrimSpace(aerr.RawJSON())
	}
	if e.Message == "" {
		e.Message = http.StatusText(e.Status)
	}
	return true
}
