package modeltest

import (
	"net/http"
	"strconv"
	"time"
)

// Call is one tool call a scripted reply makes.
type Call struct {
	ID   string
	Name string
	Args string // JSON-encoded arguments, streamed in pieces
}

// Step is one scripted reply. Build it with Text, ToolCalls, Reasoning, Error
// or Block and refine it with the methods, e.g.
//
//	modeltest.Text("hi").Finish("length").Usage(10, 2)
//
// Methods return a modified copy, so a Step can be reused as a template.
type Step struct {
	text       string
	reasoning  string
	calls      []Call
	finish     string
	usage      *usage
	model      string
	status     int // non-zero makes this an error reply
	errCode    string
	errType    string
	errMessage string
	header     http.Header
	block      bool
	delay      time.Duration
	chunkDelay time.Duration
	abort      bool
	malformed  bool
}

type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
	Details          *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details,omitempty"`
}

// Text answers with assistant text.
func Text(s string) Step { return Step{text: s} }

// ToolCalls answers with tool calls (finish_reason "tool_calls").
func ToolCalls(calls ...Call) Step { return Step{calls: append([]Call(nil), calls...)} }

// Reasoning answers with reasoning_content only; chain Text or ToolCalls
// for the rest of the answer.
func Reasoning(s string) Step { return Step{reasoning: s} }

// Error answers with an HTTP error and an OpenAI-style error body.
func Error(status int, code, message string) Step {
	return Step{status: status, errCode: code, errMessage: message}
}

// Block holds the request until Server.Release, Server.Close or the client
// going away; chain Text or others for the reply sent after a release.
func Block() Step { return Step{block: true} }

// Text sets the assistant text.
func (s Step) Text(t string) Step { s.text = t; return s }

// ToolCalls sets the tool calls.
func (s Step) ToolCalls(calls ...Call) Step {
	s.calls = append([]Call(nil), calls...)
	return s
}

// Reasoning sets reasoning_content, streamed before the text.
func (s Step) Reasoning(r string) Step { s.reasoning = r; return s }

// Finish overrides the finish_reason.
func (s Step) Finish(reason string) Step { s.finish = reason; return s }

// Usage sets the reported token usage (the total is their sum).
func (s Step) Usage(prompt, completion int) Step {
	s.usage = &usage{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion}
	return s
}

// Cached reports that cached of the prompt tokens came from the provider's cache
// (prompt_tokens_details.cached_tokens); chain it after Usage.
func (s Step) Cached(cached int) Step {
	u := usage{}
	if s.usage != nil {
		u = *s.usage
	}
	u.Details = &struct {
		CachedTokens int `json:"cached_tokens"`
	}{cached}
	s.usage = &u
	return s
}

// Model overrides the model name in the reply (default: the requested one).
func (s Step) Model(name string) Step { s.model = name; return s }

// Type sets error.type of an error reply.
func (s Step) Type(t string) Step { s.errType = t; return s }

// Header adds a response header, e.g. x-should-retry.
func (s Step) Header(key, value string) Step {
	h := s.header.Clone()
	if h == nil {
		h = http.Header{}
	}
	h.Add(key, value)
	s.header = h
	return s
}

// RetryAfter sends a Retry-After header (seconds or an HTTP date).
func (s Step) RetryAfter(v string) Step { return s.Header("Retry-After", v) }

// RetryAfterMS sends a retry-after-ms header.
func (s Step) RetryAfterMS(ms int) Step { return s.Header("retry-after-ms", strconv.Itoa(ms)) }

// Block makes this reply wait for Server.Release first.
func (s Step) Block() Step { s.block = true; return s }

// Delay waits before answering (before any byte is written).
func (s Step) Delay(d time.Duration) Step { s.delay = d; return s }

// ChunkDelay waits between streamed chunks, to exercise idle timeouts.
func (s Step) ChunkDelay(d time.Duration) Step { s.chunkDelay = d; return s }

// Abort drops the connection after the content chunks (streaming) or before
// the body (non-streaming), like a crashed server.
func (s Step) Abort() Step { s.abort = true; return s }

// Malformed answers 200 with a body that is not valid JSON (a broken SSE
// event when streaming), like a proxy that mangled the reply.
func Malformed() Step { return Step{malformed: true} }

func (s Step) finishReason() string {
	switch {
	case s.finish != "":
		return s.finish
	case len(s.calls) > 0:
		return "tool_calls"
	default:
		return "stop"
	}
}
