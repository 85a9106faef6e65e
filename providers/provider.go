// Package providers talks to LLM APIs. A Provider turns a Request (nanobot's
// session messages plus tool definitions) into one model Response, streaming
// deltas on the way when asked, and reports every failure as a classified
// *Error so the caller (a Temporal activity) knows whether to retry.
package providers

import (
	"context"
	"encoding/json"

	"github.com/nanobot-durable/nanobot/chat"
)

// Tool-choice values understood by Request.ToolChoice. Any other non-empty
// value is taken as the name of the one function the model must call.
const (
	ToolChoiceAuto     = "auto"
	ToolChoiceNone     = "none"
	ToolChoiceRequired = "required"
)

// Finish reasons as the OpenAI wire reports them.
const (
	FinishStop          = "stop"
	FinishLength        = "length"
	FinishToolCalls     = "tool_calls"
	FinishFunctionCall  = "function_call"
	FinishContentFilter = "content_filter"
)

// Request is one model call.
type Request struct {
	Model    string
	Messages []chat.Message
	Tools    []chat.ToolDefinition
	// ToolChoice is "" (auto when tools are given), "auto", "none",
	// "required", or a function name. It is only sent when Tools is non-empty.
	ToolChoice string
	MaxTokens  int
	// Temperature is omitted from the wire when nil.
	Temperature     *float64
	Stream          bool
	ReasoningEffort string
	// ExtraBody is deep-merged into the top level of the JSON body last, so
	// it can override anything (e.g. chat_template_kwargs).
	ExtraBody map[string]any
}

// Usage counts tokens as the provider reported them.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
	// CachedTokens is the part of PromptTokens served from the provider's prompt cache.
	CachedTokens int `json:"cached_tokens,omitempty"`
	// CacheWriteTokens is the part of PromptTokens written to the prompt
	// cache by this call (Anthropic's cache_creation_input_tokens).
	CacheWriteTokens int `json:"cache_write_tokens,omitempty"`
}

// Response is the model's answer with think blocks already split out of
// Content into ReasoningContent.
type Response struct {
	Content          string `json:"content"`
	ReasoningContent string `json:"reasoning_content,omitempty"`
	// ThinkingBlocks are the signed thinking blocks an Anthropic model
	// returned, a JSON array to keep in the assistant message.
	ThinkingBlocks json.RawMessage `json:"thinking_blocks,omitempty"`
	ToolCalls      []chat.ToolCall `json:"tool_calls,omitempty"`
	FinishReason   string          `json:"finish_reason"`
	Usage          Usage           `json:"usage"`
	// Model is the configured name of the model that answered when the call
	// went through a Factory model or a FallbackProvider, else what the server reported.
	Model string `json:"model,omitempty"`
	// Provider is the registry name of the provider that answered ("" for a bare client).
	Provider string `json:"provider,omitempty"`
	// FellBack is set when a fallback model answered instead of the primary.
	FellBack bool `json:"fell_back,omitempty"`
}

// Delta is one streamed piece of visible text or reasoning.
type Delta struct {
	Content   string
	Reasoning string
}

// Provider is an LLM backend.
type Provider interface {
	// Chat performs one model call. onDelta may be nil; it is called only when
	// req.Stream is set. Every error returned is a *Error.
	Chat(ctx context.Context, req Request, onDelta func(Delta)) (*Response, error)
}
