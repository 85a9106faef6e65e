package providers

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nanobot-durable/nanobot/chat"
)

// OpenAIResponses is a Provider for OpenAI's Responses API (apiType
// "responses"), statelessly: every call sends the whole history, store off.
type OpenAIResponses struct {
	opts   OpenAIOptions
	client *openai.Client
}

var _ Provider = (*OpenAIResponses)(nil)

// NewOpenAIResponses builds a provider; it does no network I/O.
func NewOpenAIResponses(opts OpenAIOptions) *OpenAIResponses {
	return &OpenAIResponses{opts: opts, client: newOpenAIClient(opts)}
}

// Chat implements Provider.
func (c *OpenAIResponses) Chat(ctx context.Context, req Request, onDelta func(Delta)) (*Response, error) {
	rreq, st, err := c.shape(req)
	if err != nil {
		return nil, Classify(err)
	}
	if req.Stream {
		return c.stream(ctx, rreq, st, onDelta)
	}
	return c.complete(ctx, rreq, st)
}

// shape builds the body as nanobot's _build_responses_body does; the
// temperature goes through the doer, go-openai's float32 would round it.
func (c *OpenAIResponses) shape(req Request) (openai.CreateResponseRequest, *callState, error) {
	instructions, input := responsesInput(req.Messages)
	tools, err := responsesTools(req.Tools)
	if err != nil {
		return openai.CreateResponseRequest{}, nil, err
	}
	store := false
	rreq := openai.CreateResponseRequest{
		Model: req.Model, Instructions: instructions, Input: input, MaxOutputTokens: req.MaxTokens,
		Store: &store, Tools: tools,
	}
	if len(tools) > 0 {
		rreq.ToolChoice = responsesToolChoice(req.ToolChoice)
	}
	effort := strings.TrimSpace(req.ReasoningEffort)
	if effort != "" && !strings.EqualFold(effort, "none") {
		rreq.Reasoning = &openai.ResponseReasoning{Effort: effort}
	}
	st := &callState{set: map[string]any{}, extra: req.ExtraBody}
	if req.Temperature != nil && supportsTemperature(req.Model, effort) && rreq.Reasoning == nil {
		st.set["temperature"] = *req.Temperature
	}
	return rreq, st, nil
}

func (c *OpenAIResponses) complete(ctx context.Context, rreq openai.CreateResponseRequest, st *callState) (*Response, error) {
	ctx, cancel := callLimit(ctx, c.opts.Timeout)
	defer cancel()
	resp, err := c.client.CreateResponse(withCallState(ctx, st), rreq)
	if err != nil {
		return nil, failure(ctx, st, err)
	}
	return fromResponses(&resp, "", nil)
}

func (c *OpenAIResponses) stream(ctx context.Context, rreq openai.CreateResponseRequest, st *callState, onDelta func(Delta)) (*Response, error) {
	ctx, stop := streamLimits(ctx, c.opts.Timeout, c.opts.StreamIdleTimeout, st)
	defer stop()
	s, err := c.client.CreateResponseStream(withCallState(ctx, st), rreq)
	if err != nil {
		return nil, failure(ctx, st, err)
	}
	defer s.Close()
	acc := &responsesStream{sink: deltaSink{onDelta: onDelta}, calls: map[int]*chat.ToolCall{}}
	for {
		ev, err := s.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			e := failure(ctx, st, err)
			var syntax *json.SyntaxError
			var typ *json.UnmarshalTypeError
			if e.Kind == "" && (errors.As(err, &syntax) || errors.As(err, &typ)) {
				e.Kind, e.Class = KindMalformed, ClassRetryable
			}
			return nil, e
		}
		if err := acc.add(ev); err != nil {
			return nil, err
		}
	}
	acc.sink.flush()
	if acc.final == nil {
		return nil, &Error{Kind: KindMalformed, Message: "stream ended before the response completed", Class: ClassRetryable}
	}
	return fromResponses(acc.final, acc.text.String(), callsByIndex(acc.calls))
}

// responsesStream forwards deltas and keeps what a terminal event lacks.
type responsesStream struct {
	sink  deltaSink
	text  strings.Builder
	calls map[int]*chat.ToolCall // by output index
	final *openai.CreateResponseResponse
}

func (a *responsesStream) add(ev openai.ResponseStreamEvent) error {
	switch ev.Type {
	case openai.ResponseStreamEventOutputTextDelta, openai.ResponseStreamEventRefusalDelta:
		a.text.WriteString(ev.Delta)
		a.sink.text(ev.Delta)
	case openai.ResponseStreamEventReasoningSummaryTextDelta, openai.ResponseStreamEventReasoningTextDelta:
		a.sink.emit(Delta{Reasoning: ev.Delta})
	case openai.ResponseStreamEventOutputItemAdded, openai.ResponseStreamEventOutputItemDone:
		if it := ev.Item; it != nil && it.Type == "function_call" {
			id := it.CallID
			if it.ID != "" {
				id += "|" + it.ID
			}
			a.calls[ev.OutputIndex] = &chat.ToolCall{ID: id, Type: "function",
				Function: chat.FunctionCall{Name: it.Name, Arguments: it.Arguments}}
		}
	case openai.ResponseStreamEventFunctionArgumentsDelta:
		if tc := a.calls[ev.OutputIndex]; tc != nil {
			tc.Function.Arguments += ev.Delta
		}
	case openai.ResponseStreamEventCompleted, openai.ResponseStreamEventIncomplete:
		a.final = ev.Response
	case openai.ResponseStreamEventFailed:
		if r := ev.Response; r != nil && r.Error != nil {
			return responsesError(r.Error.Code, r.Error.Message)
		}
		return responsesError("", "response failed")
	case openai.ResponseStreamEventError:
		return responsesError(ev.Code, ev.Message)
	}
	return nil
}

// responsesError classifies an error the API reported inside a response.
func responsesError(code, message string) *Error {
	if message == "" {
		message = "response failed"
	}
	return Classify(&Error{Code: code, Message: message})
}

// fromResponses builds our Response from a final response object; the
// streamed text and calls stand in when its output is empty.
func fromResponses(resp *openai.CreateResponseResponse, streamed string, streamedCalls []chat.ToolCall) (*Response, error) {
	if resp.Status == "failed" {
		if resp.Error != nil {
			return nil, responsesError(resp.Error.Code, resp.Error.Message)
		}
		return nil, responsesError("", "response failed")
	}
	text, reasoning, calls := responsesOutput(resp.Output)
	if text == "" && len(calls) == 0 {
		text, calls = streamed, streamedCalls
	}
	return buildResponse(text, reasoning, calls, responsesFinish(resp, len(calls)), responsesUsage(resp.Usage), resp.Model), nil
}
