// Package modeltest is a scripted OpenAI-compatible chat-completions server
// for tests ("mock at the wire"), and beside it a scripted Anthropic Messages
// API server that bills prompt caching as Anthropic does (Anthropic,
// PromptCache). Both listen on 127.0.0.1 only, answer each request with the
// next scripted Step, stream SSE when asked, and record every request they
// receive.
package modeltest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/nanobot-durable/nanobot/chat"
)

// RecordedRequest is one request as the server received it.
type RecordedRequest struct {
	Method string
	Path   string
	Query  url.Values
	Header http.Header
	Body   []byte
	// At is when the request arrived.
	At time.Time

	Model               string
	Messages            []chat.Message
	Tools               []chat.ToolDefinition
	ToolChoice          string // the string value, or compact JSON for an object
	MaxTokens           int
	MaxCompletionTokens int
	Temperature         *float64
	Stream              bool
	IncludeUsage        bool
	ReasoningEffort     string
	// Fields holds every top-level body field, for anything not decoded above.
	Fields map[string]json.RawMessage
}

// Server is a scripted model endpoint. Its methods are safe for concurrent use.
type Server struct {
	srv *httptest.Server

	mu       sync.Mutex
	script   []Step
	handler  func(req *RecordedRequest) Step
	requests []RecordedRequest
	key      string
	release  chan struct{}
	waiting  int
	seq      int

	done      chan struct{}
	closeOnce sync.Once
}

// New starts a server on 127.0.0.1 with an optional initial script.
func New(steps ...Step) *Server {
	s := &Server{
		script:  append([]Step(nil), steps...),
		release: make(chan struct{}),
		done:    make(chan struct{}),
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// URL is the base URL to configure a client with; it ends in /v1.
func (s *Server) URL() string { return s.srv.URL + "/v1" }

// Close releases blocked requests and shuts the server down.
func (s *Server) Close() {
	s.closeOnce.Do(func() { close(s.done) })
	s.srv.Close()
}

// Script appends steps to the script.
func (s *Server) Script(steps ...Step) *Server {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, steps...)
	return s
}

// Handle sets a function that answers requests once the script is used up.
func (s *Server) Handle(fn func(req *RecordedRequest) Step) *Server {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handler = fn
	return s
}

// RequireKey makes the server answer 401 unless "Authorization: Bearer key"
// is sent. Rejected requests are recorded but consume no step.
func (s *Server) RequireKey(key string) *Server {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.key = key
	return s
}

// Release lets every request currently held by a Block step answer.
func (s *Server) Release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.release)
	s.release = make(chan struct{})
}

// Waiting is the number of requests held by a Block step right now.
func (s *Server) Waiting() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.waiting
}

// Requests returns a copy of every request received so far.
func (s *Server) Requests() []RecordedRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]RecordedRequest(nil), s.requests...)
}

// Count is the number of requests received so far.
func (s *Server) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

// Remaining is the number of scripted steps not yet used.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.script)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		writeError(w, http.StatusNotFound, "", "", fmt.Sprintf("modeltest: no route for %s %s", r.Method, r.URL.Path), nil)
		return
	}
	rec, err := record(r)
	s.mu.Lock()
	s.requests = append(s.requests, *rec)
	key := s.key
	s.mu.Unlock()
	if err != nil {
		writeError(w, http.StatusBadRequest, "", "invalid_request_error", "modeltest: "+err.Error(), nil)
		return
	}
	if key != "" && r.Header.Get("Authorization") != "Bearer "+key {
		writeError(w, http.StatusUnauthorized, "invalid_api_key", "invalid_request_error", "Incorrect API key provided", nil)
		return
	}
	step, ok := s.next(rec)
	if !ok {
		writeError(w, http.StatusInternalServerError, "", "", "modeltest: script exhausted", nil)
		return
	}
	if !s.wait(r.Context(), step) {
		return
	}
	if step.status != 0 {
		writeError(w, step.status, step.errCode, step.errType, step.errMessage, step.header)
		return
	}
	if step.model == "" {
		step.model = rec.Model
	}
	if step.usage == nil {
		step.usage = estimateUsage(rec, step)
	}
	id := s.nextID()
	if step.malformed {
		writeMalformed(w, rec.Stream)
		return
	}
	if rec.Stream {
		writeStream(r.Context(), s.done, w, id, step, rec.IncludeUsage)
		return
	}
	writeJSON(w, id, step)
}

// next takes the next scripted step, or asks the handler.
func (s *Server) next(rec *RecordedRequest) (Step, bool) {
	return nextStep(&s.mu, &s.script, &s.handler, rec)
}

// nextStep pops the script, or asks the handler (outside the lock, which
// guards script and handler) once it is used up; false when there is neither.
func nextStep[R any](mu *sync.Mutex, script *[]Step, handler *func(*R) Step, rec *R) (Step, bool) {
	mu.Lock()
	if len(*script) > 0 {
		step := (*script)[0]
		*script = (*script)[1:]
		mu.Unlock()
		return step, true
	}
	h := *handler
	mu.Unlock()
	if h == nil {
		return Step{}, false
	}
	return h(rec), true
}

// wait applies Delay and Block; false means the client or server went away.
func (s *Server) wait(ctx context.Context, step Step) bool {
	if step.delay > 0 && !sleep(ctx, s.done, step.delay) {
		return false
	}
	if !step.block {
		return true
	}
	s.mu.Lock()
	release := s.release
	s.waiting++
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.waiting--
		s.mu.Unlock()
	}()
	select {
	case <-release:
		return true
	case <-ctx.Done():
		return false
	case <-s.done:
		return false
	}
}

func (s *Server) nextID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	return fmt.Sprintf("chatcmpl-modeltest-%d", s.seq)
}

func sleep(ctx context.Context, done <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-done:
		return false
	}
}

// record decodes the body; the request is returned even when decoding fails.
func record(r *http.Request) (*RecordedRequest, error) {
	rec := &RecordedRequest{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Header: r.Header.Clone(), At: time.Now()}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return rec, fmt.Errorf("read body: %w", err)
	}
	rec.Body = body
	if err := json.Unmarshal(body, &rec.Fields); err != nil {
		return rec, fmt.Errorf("decode body: %w", err)
	}
	var b struct {
		Model               string          `json:"model"`
		Messages            []chat.Message  `json:"messages"`
		ToolChoice          json.RawMessage `json:"tool_choice"`
		MaxTokens           int             `json:"max_tokens"`
		MaxCompletionTokens int             `json:"max_completion_tokens"`
		Temperature         *float64        `json:"temperature"`
		Stream              bool            `json:"stream"`
		ReasoningEffort     string          `json:"reasoning_effort"`
		StreamOptions       struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
		Tools []struct {
			Function chat.ToolDefinition `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		return rec, fmt.Errorf("decode body: %w", err)
	}
	rec.Model, rec.Messages = b.Model, b.Messages
	rec.MaxTokens, rec.MaxCompletionTokens = b.MaxTokens, b.MaxCompletionTokens
	rec.Temperature, rec.Stream, rec.ReasoningEffort = b.Temperature, b.Stream, b.ReasoningEffort
	rec.IncludeUsage = b.StreamOptions.IncludeUsage
	for _, t := range b.Tools {
		rec.Tools = append(rec.Tools, t.Function)
	}
	if tc := bytes.TrimSpace(b.ToolChoice); len(tc) > 0 {
		var str string
		if json.Unmarshal(tc, &str) == nil {
			rec.ToolChoice = str
		} else {
			var buf bytes.Buffer
			if json.Compact(&buf, tc) == nil {
				rec.ToolChoice = buf.String()
			}
		}
	}
	return rec, nil
}

// estimateUsage gives deterministic token counts (about 4 bytes a token).
func estimateUsage(rec *RecordedRequest, step Step) *usage {
	in := 0
	for _, m := range rec.Messages {
		in += len(m.Content)
	}
	out := len(step.text) + len(step.reasoning)
	for _, c := range step.calls {
		out += len(c.Name) + len(c.Args)
	}
	u := &usage{PromptTokens: in/4 + 1, CompletionTokens: out/4 + 1}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	return u
}
