package modeltest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"github.com/nanobot-durable/nanobot/tokens"
)

// AnthropicRequest is one Messages API request as the Anthropic server received it.
type AnthropicRequest struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
	Model  string
	Stream bool
	// Messages are the request's messages with their content blocks as sent.
	Messages []AnthropicMessage
	// Usage is what the prompt cache billed this request (zero when it was refused).
	Usage CacheUsage
}

// AnthropicMessage is one message of a request.
type AnthropicMessage struct {
	Role    string
	Content []json.RawMessage
}

// LastUserText is the text blocks of the last user message that has any
// (a message of tool results has none), joined by newlines.
func (r *AnthropicRequest) LastUserText() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role != "user" {
			continue
		}
		var texts []string
		for _, b := range r.Messages[i].Content {
			var t struct{ Type, Text string }
			if json.Unmarshal(b, &t) == nil && t.Type == "text" {
				texts = append(texts, t.Text)
			}
		}
		if len(texts) > 0 {
			return strings.Join(texts, "\n")
		}
	}
	return ""
}

// EndsWithToolResult: the last message carries a tool_result (the model is
// to answer from a tool's output).
func (r *AnthropicRequest) EndsWithToolResult() bool {
	if len(r.Messages) == 0 {
		return false
	}
	for _, b := range r.Messages[len(r.Messages)-1].Content {
		var t struct{ Type string }
		if json.Unmarshal(b, &t) == nil && t.Type == "tool_result" {
			return true
		}
	}
	return false
}

// Anthropic is a scripted Anthropic Messages API server (POST …/v1/messages)
// whose usage comes from a PromptCache, so cache reads and writes are what
// Anthropic would bill for the bytes sent. It answers with the same Steps as
// Server (text, tool calls, errors), streamed as Anthropic's SSE events when
// asked. It listens on 127.0.0.1 only; its methods are safe for concurrent use.
type Anthropic struct {
	srv   *httptest.Server
	cache *PromptCache

	mu       sync.Mutex
	script   []Step
	handler  func(req *AnthropicRequest) Step
	requests []AnthropicRequest
	seq      int
}

// NewAnthropic starts a server with an empty prompt cache and an optional script.
func NewAnthropic(steps ...Step) *Anthropic {
	s := &Anthropic{cache: NewPromptCache(), script: append([]Step(nil), steps...)}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// URL is the base URL to configure a client with; it ends in /v1.
func (s *Anthropic) URL() string { return s.srv.URL + "/v1" }

// Cache is the server's prompt cache (to move its clock in a test).
func (s *Anthropic) Cache() *PromptCache { return s.cache }

// Close shuts the server down.
func (s *Anthropic) Close() { s.srv.Close() }

// Script appends steps to the script.
func (s *Anthropic) Script(steps ...Step) *Anthropic {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, steps...)
	return s
}

// Handle sets a function that answers requests once the script is used up.
func (s *Anthropic) Handle(fn func(req *AnthropicRequest) Step) *Anthropic {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handler = fn
	return s
}

// Requests returns a copy of every request received so far.
func (s *Anthropic) Requests() []AnthropicRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]AnthropicRequest(nil), s.requests...)
}

func (s *Anthropic) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/messages") {
		writeAnthropicError(w, Error(http.StatusNotFound, "", fmt.Sprintf("modeltest: no route for %s %s", r.Method, r.URL.Path)).Type("not_found_error"))
		return
	}
	rec := AnthropicRequest{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone()}
	body, err := io.ReadAll(r.Body)
	rec.Body = body
	var decoded struct {
		Model    string `json:"model"`
		Stream   bool   `json:"stream"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err == nil {
		err = json.Unmarshal(body, &decoded)
	}
	rec.Model, rec.Stream = decoded.Model, decoded.Stream
	for _, m := range decoded.Messages {
		content, cerr := contentBlocks(m.Content)
		if cerr != nil && err == nil {
			err = fmt.Errorf("message content: %w", cerr)
		}
		rec.Messages = append(rec.Messages, AnthropicMessage{Role: m.Role, Content: content})
	}
	if err == nil {
		rec.Usage, err = s.cache.Account(body)
	}
	s.mu.Lock()
	s.requests = append(s.requests, rec)
	s.mu.Unlock()
	if err != nil {
		writeAnthropicError(w, Error(http.StatusBadRequest, "", err.Error()).Type("invalid_request_error"))
		return
	}
	step, ok := s.next(&rec)
	if !ok {
		writeAnthropicError(w, Error(http.StatusInternalServerError, "", "modeltest: script exhausted").Type("api_error"))
		return
	}
	if step.status != 0 {
		writeAnthropicError(w, step)
		return
	}
	if step.model == "" {
		step.model = rec.Model
	}
	msg := s.message(step, rec.Usage)
	if rec.Stream {
		writeAnthropicStream(w, msg, step)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(msg)
}

// next takes the next scripted step, or asks the handler.
func (s *Anthropic) next(rec *AnthropicRequest) (Step, bool) {
	return nextStep(&s.mu, &s.script, &s.handler, rec)
}

// anthropicUsage is the usage object of a Messages API reply.
type anthropicUsage struct {
	InputTokens              int `json:"input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	CacheCreation            struct {
		Ephemeral5m int `json:"ephemeral_5m_input_tokens"`
		Ephemeral1h int `json:"ephemeral_1h_input_tokens"`
	} `json:"cache_creation"`
	OutputTokens int `json:"output_tokens"`
}

// anthropicMessage is a whole reply, as the non-streamed API sends it.
type anthropicMessage struct {
	ID           string           `json:"id"`
	Type         string           `json:"type"`
	Role         string           `json:"role"`
	Model        string           `json:"model"`
	Content      []map[string]any `json:"content"`
	StopReason   string           `json:"stop_reason"`
	StopSequence *string          `json:"stop_sequence"`
	Usage        anthropicUsage   `json:"usage"`
}

// message builds the reply of a step: text, then tool_use blocks.
func (s *Anthropic) message(step Step, u CacheUsage) anthropicMessage {
	s.mu.Lock()
	s.seq++
	seq := s.seq
	s.mu.Unlock()
	msg := anthropicMessage{ID: fmt.Sprintf("msg_modeltest_%d", seq), Type: "message", Role: "assistant", Model: step.model,
		Content: []map[string]any{}, StopReason: anthropicStopReason(step)}
	count := tokens.For(step.model)
	out := 0
	if step.text != "" {
		msg.Content = append(msg.Content, map[string]any{"type": "text", "text": step.text})
		out += count.Text(step.text)
	}
	for i, c := range step.calls {
		id := c.ID
		if id == "" {
			id = fmt.Sprintf("toolu_modeltest_%d_%d", seq, i)
		}
		input := json.RawMessage(c.Args)
		if !json.Valid(input) {
			input = json.RawMessage("{}")
		}
		msg.Content = append(msg.Content, map[string]any{"type": "tool_use", "id": id, "name": c.Name, "input": input})
		out += count.Text(c.Name) + count.Text(c.Args)
	}
	msg.Usage = anthropicUsage{InputTokens: u.Input, CacheCreationInputTokens: u.CacheWrite, CacheReadInputTokens: u.CacheRead,
		OutputTokens: max(out, 1)}
	msg.Usage.CacheCreation.Ephemeral5m, msg.Usage.CacheCreation.Ephemeral1h = u.CacheWrite-u.CacheWrite1h, u.CacheWrite1h
	return msg
}

func anthropicStopReason(step Step) string {
	switch {
	case step.finish == "length":
		return "max_tokens"
	case step.finish != "" && step.finish != "stop" && step.finish != "tool_calls":
		return step.finish
	case len(step.calls) > 0:
		return "tool_use"
	}
	return "end_turn"
}

func writeAnthropicError(w http.ResponseWriter, step Step) {
	for k, vs := range step.header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	typ := step.errType
	if typ == "" {
		typ = "api_error"
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(step.status)
	_ = json.NewEncoder(w).Encode(map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": step.errMessage}})
}

// writeAnthropicStream sends message_start (with the prompt's usage), each
// block as start, deltas in pieces and stop, then message_delta with the
// stop reason and output tokens, and message_stop.
func writeAnthropicStream(w http.ResponseWriter, msg anthropicMessage, step Step) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	send := func(v map[string]any) bool {
		b, err := json.Marshal(v)
		if err != nil {
			return false
		}
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", v["type"], b); err != nil {
			return false
		}
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		return true
	}
	start := msg
	start.Content, start.StopReason = []map[string]any{}, ""
	start.Usage.OutputTokens = 1
	startJSON, _ := json.Marshal(start)
	var startMsg map[string]any
	_ = json.Unmarshal(startJSON, &startMsg)
	startMsg["stop_reason"] = nil
	if !send(map[string]any{"type": "message_start", "message": startMsg}) {
		return
	}
	for i, block := range msg.Content {
		head, deltas := map[string]any{}, []map[string]any{}
		switch block["type"] {
		case "text":
			head = map[string]any{"type": "text", "text": ""}
			for _, p := range pieces(step.text) {
				deltas = append(deltas, map[string]any{"type": "text_delta", "text": p})
			}
		case "tool_use":
			head = map[string]any{"type": "tool_use", "id": block["id"], "name": block["name"], "input": map[string]any{}}
			for _, p := range pieces(string(block["input"].(json.RawMessage))) {
				deltas = append(deltas, map[string]any{"type": "input_json_delta", "partial_json": p})
			}
		}
		if !send(map[string]any{"type": "content_block_start", "index": i, "content_block": head}) {
			return
		}
		for _, d := range deltas {
			if !send(map[string]any{"type": "content_block_delta", "index": i, "delta": d}) {
				return
			}
		}
		if !send(map[string]any{"type": "content_block_stop", "index": i}) {
			return
		}
	}
	if !send(map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": msg.StopReason, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": msg.Usage.OutputTokens}}) {
		return
	}
	send(map[string]any{"type": "message_stop"})
}
