package modeltest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// created is a fixed timestamp so replies are byte-for-byte reproducible.
const created = 1700000000

type errorBody struct {
	Error struct {
		Message string `json:"message"`
		Type    string `json:"type,omitempty"`
		Code    string `json:"code,omitempty"`
	} `json:"error"`
}

func writeError(w http.ResponseWriter, status int, code, typ, message string, header http.Header) {
	for k, vs := range header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	var b errorBody
	b.Error.Message, b.Error.Type, b.Error.Code = message, typ, code
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(b)
}

type wireFunction struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

type wireToolCall struct {
	Index    *int         `json:"index,omitempty"`
	ID       string       `json:"id,omitempty"`
	Type     string       `json:"type,omitempty"`
	Function wireFunction `json:"function"`
}

func writeJSON(w http.ResponseWriter, id string, step Step) {
	if step.abort {
		panic(http.ErrAbortHandler) // drops the connection without a response
	}
	msg := map[string]any{"role": "assistant", "content": step.text}
	if step.text == "" && len(step.calls) > 0 {
		msg["content"] = nil
	}
	if step.reasoning != "" {
		msg["reasoning_content"] = step.reasoning
	}
	if len(step.calls) > 0 {
		calls := make([]wireToolCall, 0, len(step.calls))
		for _, c := range step.calls {
			calls = append(calls, wireToolCall{ID: c.ID, Type: "function", Function: wireFunction{Name: c.Name, Arguments: c.Args}})
		}
		msg["tool_calls"] = calls
	}
	body := map[string]any{
		"id":      id,
		"object":  "chat.completion",
		"created": created,
		"model":   step.model,
		"choices": []map[string]any{{"index": 0, "message": msg, "finish_reason": step.finishReason()}},
		"usage":   step.usage,
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(body)
}

func writeMalformed(w http.ResponseWriter, stream bool) {
	if stream {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = fmt.Fprint(w, "data: {\"id\": \"chatcmpl-broken\", \"choices\": [{\"delta\": {\"content\": \"par\n\ndata: [DONE]\n\n")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = fmt.Fprint(w, `{"id": "chatcmpl-broken", "choices": [{"message": {"role": "assistant", "content": "par`)
}

type streamChoice struct {
	Index        int            `json:"index"`
	Delta        map[string]any `json:"delta"`
	FinishReason *string        `json:"finish_reason"`
}

type streamChunk struct {
	ID      string         `json:"id"`
	Object  string         `json:"object"`
	Created int64          `json:"created"`
	Model   string         `json:"model"`
	Choices []streamChoice `json:"choices"`
	Usage   *usage         `json:"usage,omitempty"`
}

// sse writes server-sent events, pausing between chunks when asked.
type sse struct {
	ctx   context.Context
	done  <-chan struct{} // server closing
	w     http.ResponseWriter
	id    string
	model string
	delay time.Duration
	sent  int
}

func (s *sse) send(v any) bool {
	if s.sent > 0 && s.delay > 0 {
		t := time.NewTimer(s.delay)
		select {
		case <-t.C:
		case <-s.ctx.Done():
			t.Stop()
			return false
		case <-s.done:
			t.Stop()
			return false
		}
	}
	s.sent++
	b, err := json.Marshal(v)
	if err != nil {
		return false
	}
	if _, err := fmt.Fprintf(s.w, "data: %s\n\n", b); err != nil {
		return false
	}
	if f, ok := s.w.(http.Flusher); ok {
		f.Flush()
	}
	return true
}

func (s *sse) delta(d map[string]any, finish *string) bool {
	return s.send(streamChunk{
		ID: s.id, Object: "chat.completion.chunk", Created: created, Model: s.model,
		Choices: []streamChoice{{Index: 0, Delta: d, FinishReason: finish}},
	})
}

// writeStream sends the role first, reasoning and content in a few pieces,
// each tool call as a header delta plus argument pieces, the finish reason,
// the usage chunk when asked, then [DONE].
func writeStream(ctx context.Context, done <-chan struct{}, w http.ResponseWriter, id string, step Step, includeUsage bool) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	s := &sse{ctx: ctx, done: done, w: w, id: id, model: step.model, delay: step.chunkDelay}

	if !s.delta(map[string]any{"role": "assistant", "content": ""}, nil) {
		return
	}
	for _, piece := range pieces(step.reasoning) {
		if !s.delta(map[string]any{"reasoning_content": piece}, nil) {
			return
		}
	}
	for _, piece := range pieces(step.text) {
		if !s.delta(map[string]any{"content": piece}, nil) {
			return
		}
	}
	if step.abort {
		panic(http.ErrAbortHandler) // the client sees the body cut short
	}
	for i, c := range step.calls {
		head := wireToolCall{Index: &i, ID: c.ID, Type: "function", Function: wireFunction{Name: c.Name}}
		if !s.delta(map[string]any{"tool_calls": []wireToolCall{head}}, nil) {
			return
		}
		for _, piece := range pieces(c.Args) {
			part := wireToolCall{Index: &i, Function: wireFunction{Arguments: piece}}
			if !s.delta(map[string]any{"tool_calls": []wireToolCall{part}}, nil) {
				return
			}
		}
	}
	finish := step.finishReason()
	if !s.delta(map[string]any{}, &finish) {
		return
	}
	if includeUsage {
		if !s.send(streamChunk{ID: id, Object: "chat.completion.chunk", Created: created, Model: step.model, Choices: []streamChoice{}, Usage: step.usage}) {
			return
		}
	}
	_, _ = fmt.Fprint(w, "data: [DONE]\n\n")
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// pieces splits s into at most three parts on rune boundaries, so clients
// must reassemble.
func pieces(s string) []string {
	r := []rune(s)
	if len(r) == 0 {
		return nil
	}
	size := (len(r) + 2) / 3
	var out []string
	for len(r) > 0 {
		n := min(size, len(r))
		out = append(out, string(r[:n]))
		r = r[n:]
	}
	return out
}
