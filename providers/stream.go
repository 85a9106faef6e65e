package providers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nanobot-durable/nanobot/chat"
)

func (c *OpenAICompatible) stream(ctx context.Context, creq openai.ChatCompletionRequest, st *callState, onDelta func(Delta)) (*Response, error) {
	creq.Stream = true
	creq.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
	ctx, stop := streamLimits(ctx, c.opts.Timeout, c.opts.StreamIdleTimeout, st)
	defer stop()
	s, err := c.client.CreateChatCompletionStream(withCallState(ctx, st), creq)
	if err != nil {
		return nil, failure(ctx, st, err)
	}
	defer s.Close()

	acc := &streamAcc{deltaSink: deltaSink{onDelta: onDelta}, calls: map[int]*chat.ToolCall{}}
	for {
		raw, err := s.RecvRaw()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, failure(ctx, st, err)
		}
		if err := acc.add(raw); err != nil {
			e := failure(ctx, st, fmt.Errorf("decode stream chunk: %w", err))
			if e.Kind == "" {
				e.Kind, e.Class = KindMalformed, ClassRetryable
			}
			return nil, e
		}
	}
	return acc.response(), nil
}

// streamAcc folds chunks into one Response and forwards deltas.
type streamAcc struct {
	deltaSink
	content   strings.Builder // raw content, think tags included
	reasoning strings.Builder // reasoning_content / reasoning deltas
	calls     map[int]*chat.ToolCall
	finish    string
	usage     Usage
	model     string
}

// chunkReasoning reads delta.reasoning (OpenRouter, vLLM), which go-openai
// does not decode.
type chunkReasoning struct {
	Choices []struct {
		Delta struct {
			Reasoning json.RawMessage `json:"reasoning"`
		} `json:"delta"`
	} `json:"choices"`
}

func (a *streamAcc) add(raw []byte) error {
	var chunk openai.ChatCompletionStreamResponse
	if err := json.Unmarshal(raw, &chunk); err != nil {
		return err
	}
	if chunk.Model != "" {
		a.model = chunk.Model
	}
	if u := chunk.Usage; u != nil {
		a.usage = usageOf(*u)
	}
	if len(chunk.Choices) == 0 {
		return nil
	}
	choice := chunk.Choices[0]
	d := choice.Delta

	reasoning := d.ReasoningContent
	if reasoning == "" && bytes.Contains(raw, []byte(`"reasoning"`)) {
		var cr chunkReasoning
		if err := json.Unmarshal(raw, &cr); err == nil && len(cr.Choices) > 0 {
			_ = json.Unmarshal(cr.Choices[0].Delta.Reasoning, &reasoning)
		}
	}
	if reasoning != "" {
		a.reasoning.WriteString(reasoning)
		a.emit(Delta{Reasoning: reasoning})
	}
	if d.Content != "" {
		a.content.WriteString(d.Content)
		a.text(d.Content)
	}
	for i, tc := range d.ToolCalls {
		idx := i
		if tc.Index != nil {
			idx = *tc.Index
		}
		a.addToolCall(idx, tc.ID, string(tc.Type), tc.Function.Name, tc.Function.Arguments)
	}
	if fc := d.FunctionCall; fc != nil {
		a.addToolCall(0, "", "", fc.Name, fc.Arguments)
	}
	if fr := string(choice.FinishReason); fr != "" && fr != "null" {
		a.finish = fr
	}
	return nil
}

// addToolCall accumulates by index: id and name arrive once, arguments in pieces.
func (a *streamAcc) addToolCall(idx int, id, typ, name, args string) {
	tc, ok := a.calls[idx]
	if !ok {
		tc = &chat.ToolCall{}
		a.calls[idx] = tc
	}
	if id != "" {
		tc.ID = id
	}
	if typ != "" {
		tc.Type = typ
	}
	if name != "" {
		tc.Function.Name = name
	}
	tc.Function.Arguments += args
}

func (a *streamAcc) response() *Response {
	a.flush()
	return buildResponse(a.content.String(), a.reasoning.String(), callsByIndex(a.calls), a.finish, a.usage, a.model)
}

// callsByIndex lists streamed tool calls in their index order.
func callsByIndex(calls map[int]*chat.ToolCall) []chat.ToolCall {
	idxs := make([]int, 0, len(calls))
	for i := range calls {
		idxs = append(idxs, i)
	}
	sort.Ints(idxs)
	out := make([]chat.ToolCall, 0, len(idxs))
	for _, i := range idxs {
		out = append(out, *calls[i])
	}
	return out
}
