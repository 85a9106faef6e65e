package providers

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// Defaults from nanobot (NANOBOT_LLM_TIMEOUT_S, NANOBOT_STREAM_IDLE_TIMEOUT_S),
// for callers that build options from configuration.
const (
	DefaultTimeout           = 300 * time.Second
	DefaultStreamIdleTimeout = 90 * time.Second
)

// minStreamWall is the floor of the streaming wall limit: max(300s, 2×Timeout).
const minStreamWall = 300 * time.Second

// OpenAIOptions configures an OpenAI-compatible endpoint.
type OpenAIOptions struct {
	BaseURL      string // e.g. https://api.openai.com/v1; empty means OpenAI
	APIKey       string // sent as "Authorization: Bearer", or in APIKeyHeader; empty sends none
	APIKeyHeader string // carries the key instead of Authorization when set (Azure's "api-key")
	ExtraHeaders map[string]string
	ExtraQuery   map[string]string
	HTTPClient   *http.Client // nil means a plain client; timeouts come from the options below
	// Timeout bounds a whole non-streamed request; 0 means no limit. A
	// streamed request gets max(300s, 2×Timeout) as its wall limit.
	Timeout time.Duration
	// StreamIdleTimeout fails a streamed request when no byte arrives for
	// this long; 0 means no limit.
	StreamIdleTimeout time.Duration
	// UseMaxCompletionTokens sends max_completion_tokens instead of
	// max_tokens for every model (reasoning families always get it).
	UseMaxCompletionTokens bool
	// PromptCaching marks cache_control breakpoints on requests for Claude
	// models (a gateway that passes them on, such as OpenRouter).
	PromptCaching bool
}

// OpenAICompatible is a Provider for any chat-completions API.
type OpenAICompatible struct {
	opts   OpenAIOptions
	client *openai.Client
}

var _ Provider = (*OpenAICompatible)(nil)

// NewOpenAICompatible builds a provider; it does no network I/O.
func NewOpenAICompatible(opts OpenAIOptions) *OpenAICompatible {
	return &OpenAICompatible{opts: opts, client: newOpenAIClient(opts)}
}

// newOpenAIClient is the go-openai client both OpenAI dialects use, its
// requests going through our doer.
func newOpenAIClient(opts OpenAIOptions) *openai.Client {
	headers := opts.ExtraHeaders
	bearer := opts.APIKey
	if opts.APIKeyHeader != "" && opts.APIKey != "" {
		bearer = ""
		headers = map[string]string{opts.APIKeyHeader: opts.APIKey}
		for k, v := range opts.ExtraHeaders {
			headers[k] = v
		}
	}
	cfg := openai.DefaultConfig(bearer)
	if opts.BaseURL != "" {
		cfg.BaseURL = strings.TrimRight(opts.BaseURL, "/")
	}
	var next openai.HTTPDoer = opts.HTTPClient
	if opts.HTTPClient == nil {
		next = &http.Client{}
	}
	cfg.HTTPClient = &doer{next: next, headers: headers, query: opts.ExtraQuery}
	return openai.NewClientWithConfig(cfg)
}

// Chat implements Provider.
func (c *OpenAICompatible) Chat(ctx context.Context, req Request, onDelta func(Delta)) (*Response, error) {
	creq, set, err := c.shape(req)
	if err != nil {
		return nil, Classify(err)
	}
	st := &callState{set: set, extra: req.ExtraBody}
	if req.Stream {
		return c.stream(ctx, creq, st, onDelta)
	}
	return c.complete(ctx, creq, st)
}

func (c *OpenAICompatible) complete(ctx context.Context, creq openai.ChatCompletionRequest, st *callState) (*Response, error) {
	ctx, cancel := callLimit(ctx, c.opts.Timeout)
	defer cancel()
	st.keepBody = true
	resp, err := c.client.CreateChatCompletion(withCallState(ctx, st), creq)
	if err != nil {
		return nil, failure(ctx, st, err)
	}
	if len(resp.Choices) == 0 {
		return nil, &Error{Kind: KindEmpty, Message: "API returned empty choices", Class: ClassNonRetryable}
	}
	choice := resp.Choices[0]
	reasoning := choice.Message.ReasoningContent
	if reasoning == "" {
		reasoning = rawReasoning(st.body.Bytes())
	}
	return buildResponse(
		messageText(choice.Message),
		reasoning,
		fromOpenAIToolCalls(choice.Message.ToolCalls),
		string(choice.FinishReason),
		usageOf(resp.Usage),
		resp.Model,
	), nil
}

// callLimit bounds a non-streamed call by timeout (0: no limit).
func callLimit(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeoutCause(ctx, timeout, timedOutAfter(timeout))
}

// streamLimits bounds a streamed call by nanobot's wall limit and fails it
// once no byte arrived for idle; the watch starts before sending, so a
// server that never answers counts as idle too. The doer kicks it.
func streamLimits(ctx context.Context, timeout, idle time.Duration, st *callState) (context.Context, func()) {
	var stops []func()
	if wall := streamWall(timeout); wall > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, wall, timedOutAfter(wall))
		stops = append(stops, cancel)
	}
	if idle > 0 {
		var cancel context.CancelCauseFunc
		ctx, cancel = context.WithCancelCause(ctx)
		st.idle = newIdleWatch(idle, func() { cancel(stalledFor(idle)) })
		stops = append(stops, func() { st.idle.stop(); cancel(nil) })
	}
	return ctx, func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
}

// streamWall is nanobot's streaming wall limit, max(300s, 2×timeout); 0 is none.
func streamWall(timeout time.Duration) time.Duration {
	if timeout <= 0 {
		return 0
	}
	return max(minStreamWall, 2*timeout)
}

// timeoutCause marks a context ended by one of our own limits, so the error
// can say which one instead of "context canceled".
type timeoutCause struct{ msg string }

func (t *timeoutCause) Error() string { return t.msg }

func timedOutAfter(d time.Duration) error {
	return &timeoutCause{msg: "timed out after " + seconds(d) + "s"}
}

func stalledFor(d time.Duration) error {
	return &timeoutCause{msg: "stream stalled for more than " + seconds(d) + " seconds"}
}

func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
}

// failure builds the classified *Error for a failed call, preferring what the
// context says (our timeouts, the caller's cancellation) over the symptom.
func failure(ctx context.Context, st *callState, err error) *Error {
	if ctx.Err() != nil {
		var tc *timeoutCause
		switch cause := context.Cause(ctx); {
		case errors.As(cause, &tc):
			return &Error{Kind: KindTimeout, Message: tc.msg, Class: ClassRetryable, Err: err}
		case errors.Is(ctx.Err(), context.Canceled):
			return &Error{Kind: KindCanceled, Message: "request canceled", Class: ClassNonRetryable, Err: err}
		default:
			return &Error{Kind: KindTimeout, Message: "timed out (" + cause.Error() + ")", Class: ClassRetryable, Err: err}
		}
	}
	e := describe(err)
	if st != nil && st.status >= 400 {
		if e.Status == 0 {
			e.Status = st.status
		}
		e.applyHeaders(st.header)
	}
	e.Class = classOf(e)
	return e
}
