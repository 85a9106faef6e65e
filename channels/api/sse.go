package api

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// sseWriter writes a chat completion as OpenAI streams it: a role chunk
// first, content chunks, a chunk with the finish reason, then
// "data: [DONE]". All chunks share one id, created time and model.
type sseWriter struct {
	w       io.Writer
	flush   func()
	id      string
	created int64
	model   string
}

// newSSEWriter sets the event-stream headers and sends them at once, so a
// client sees the response start before the agent has said anything.
func newSSEWriter(w http.ResponseWriter, id string, created int64, model string) *sseWriter {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no") // a reverse proxy must not hold the chunks back
	w.WriteHeader(http.StatusOK)
	s := &sseWriter{w: w, id: id, created: created, model: model, flush: func() {}}
	if f, ok := w.(http.Flusher); ok {
		s.flush = f.Flush
	}
	s.flush()
	return s
}

type chunkDelta struct {
	Role    string  `json:"role,omitempty"`
	Content *string `json:"content,omitempty"`
}

type chunkChoice struct {
	Index        int        `json:"index"`
	Delta        chunkDelta `json:"delta"`
	FinishReason *string    `json:"finish_reason"`
}

type chunk struct {
	ID      string        `json:"id"`
	Object  string        `json:"object"`
	Created int64         `json:"created"`
	Model   string        `json:"model"`
	Choices []chunkChoice `json:"choices"`
}

func (s *sseWriter) chunk(delta chunkDelta, finish *string) error {
	return s.event(chunk{
		ID: s.id, Object: "chat.completion.chunk", Created: s.created, Model: s.model,
		Choices: []chunkChoice{{Index: 0, Delta: delta, FinishReason: finish}},
	})
}

func (s *sseWriter) event(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode stream chunk: %w", err)
	}
	return s.data(b)
}

func (s *sseWriter) data(b []byte) error {
	if _, err := fmt.Fprintf(s.w, "data: %s\n\n", b); err != nil {
		return fmt.Errorf("write stream chunk: %w", err)
	}
	s.flush()
	return nil
}

// Role sends the first chunk: the assistant role with empty content.
func (s *sseWriter) Role() error {
	empty := ""
	return s.chunk(chunkDelta{Role: "assistant", Content: &empty}, nil)
}

// Content sends one piece of the answer; an empty piece sends nothing.
func (s *sseWriter) Content(text string) error {
	if text == "" {
		return nil
	}
	return s.chunk(chunkDelta{Content: &text}, nil)
}

// Finish sends the finish reason and the [DONE] sentinel that ends the stream.
func (s *sseWriter) Finish(reason string) error {
	if err := s.chunk(chunkDelta{}, &reason); err != nil {
		return err
	}
	return s.data([]byte("[DONE]"))
}

// Fail ends a stream whose status line is already sent with an error event
// in OpenAI's shape, which OpenAI clients raise as an API error; no [DONE]
// follows, so no client takes the stream for a finished answer.
func (s *sseWriter) Fail(e apiError) error {
	return s.data(e.body())
}
