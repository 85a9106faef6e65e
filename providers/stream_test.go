package providers_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/providers"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// deltaLog records streamed deltas.
type deltaLog struct {
	mu     sync.Mutex
	deltas []providers.Delta
}

func (l *deltaLog) add(d providers.Delta) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.deltas = append(l.deltas, d)
}

func (l *deltaLog) content() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	for _, d := range l.deltas {
		b.WriteString(d.Content)
	}
	return b.String()
}

func (l *deltaLog) reasoning() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	for _, d := range l.deltas {
		b.WriteString(d.Reasoning)
	}
	return b.String()
}

func (l *deltaLog) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.deltas)
}

func streamRequest(text string) providers.Request {
	req := userRequest(text)
	req.Stream = true
	return req
}

func TestStreamText(t *testing.T) {
	srv := newServer(t, modeltest.Text("Hello streaming world").Usage(20, 4))
	var log deltaLog
	resp, err := newProvider(srv).Chat(testContext(t), streamRequest("hi"), log.add)
	require.NoError(t, err)
	require.Equal(t, "Hello streaming world", resp.Content)
	require.Equal(t, "Hello streaming world", log.content())
	require.Greater(t, log.count(), 1, "content arrives in several deltas")
	require.Equal(t, "stop", resp.FinishReason)
	require.Equal(t, providers.Usage{PromptTokens: 20, CompletionTokens: 4, TotalTokens: 24}, resp.Usage)
	require.Equal(t, "test-model", resp.Model)

	req := srv.Requests()[0]
	require.True(t, req.Stream)
	require.True(t, req.IncludeUsage, "usage is requested so the stream reports it")
}

func TestStreamNilCallback(t *testing.T) {
	srv := newServer(t, modeltest.Text("quiet"))
	resp, err := newProvider(srv).Chat(testContext(t), streamRequest("hi"), nil)
	require.NoError(t, err)
	require.Equal(t, "quiet", resp.Content)
}

func TestStreamToolCallsSplitArguments(t *testing.T) {
	args1 := `{"path":"workspace/notes/2024-06-01.md","limit":200}`
	args2 := `{"query":"durable execution temporal"}`
	srv := newServer(t, modeltest.Text("Let me check.").ToolCalls(
		modeltest.Call{ID: "call_a", Name: "read_file", Args: args1},
		modeltest.Call{ID: "call_b", Name: "web_search", Args: args2},
	))
	var log deltaLog
	resp, err := newProvider(srv).Chat(testContext(t), streamRequest("research"), log.add)
	require.NoError(t, err)
	require.Equal(t, "tool_calls", resp.FinishReason)
	require.Equal(t, "Let me check.", resp.Content)
	require.Equal(t, []chat.ToolCall{
		{ID: "call_a", Type: "function", Function: chat.FunctionCall{Name: "read_file", Arguments: args1}},
		{ID: "call_b", Type: "function", Function: chat.FunctionCall{Name: "web_search", Arguments: args2}},
	}, resp.ToolCalls)
}

func TestStreamReasoningContent(t *testing.T) {
	srv := newServer(t, modeltest.Reasoning("Consider the weather first.").Text("Take an umbrella."))
	var log deltaLog
	resp, err := newProvider(srv).Chat(testContext(t), streamRequest("umbrella?"), log.add)
	require.NoError(t, err)
	require.Equal(t, "Consider the weather first.", resp.ReasoningContent)
	require.Equal(t, "Consider the weather first.", log.reasoning())
	require.Equal(t, "Take an umbrella.", resp.Content)
	require.Equal(t, "Take an umbrella.", log.content())
}

func TestStreamThinkTagsStayOutOfContentDeltas(t *testing.T) {
	srv := newServer(t, modeltest.Text("<think>check the calendar</think>\n\nYou are free at 3pm."))
	var log deltaLog
	resp, err := newProvider(srv).Chat(testContext(t), streamRequest("free?"), log.add)
	require.NoError(t, err)
	require.Equal(t, "You are free at 3pm.", resp.Content)
	require.Equal(t, "check the calendar", resp.ReasoningContent)
	require.Equal(t, "You are free at 3pm.", log.content())
	require.Equal(t, "check the calendar", log.reasoning())
}

func TestStreamFinishLength(t *testing.T) {
	srv := newServer(t, modeltest.Text("partial answ").Finish("length"))
	resp, err := newProvider(srv).Chat(testContext(t), streamRequest("long"), nil)
	require.NoError(t, err)
	require.Equal(t, "length", resp.FinishReason)
	require.Equal(t, "partial answ", resp.Content)
}

func TestStreamCutShortIsRetryable(t *testing.T) {
	srv := newServer(t, modeltest.Text("half of it").Abort())
	var log deltaLog
	_, err := newProvider(srv).Chat(testContext(t), streamRequest("x"), log.add)
	perr := providers.Classify(err)
	require.Equal(t, providers.KindConnection, perr.Kind)
	require.Equal(t, providers.ClassRetryable, perr.Class)
	require.NotEmpty(t, log.content(), "content was streamed before the cut")
}

func TestMangledReplyIsRetryable(t *testing.T) {
	for _, stream := range []bool{true, false} {
		srv := newServer(t, modeltest.Malformed())
		req := streamRequest("x")
		req.Stream = stream
		_, err := newProvider(srv).Chat(testContext(t), req, nil)
		perr := providers.Classify(err)
		require.Equal(t, providers.ClassRetryable, perr.Class, "stream=%v: %v", stream, err)
	}
}

func TestStreamErrorBeforeFirstChunk(t *testing.T) {
	srv := newServer(t, modeltest.Error(429, "rate_limit_exceeded", "Rate limit reached").RetryAfter("7"))
	_, err := newProvider(srv).Chat(testContext(t), streamRequest("x"), nil)
	var perr *providers.Error
	require.ErrorAs(t, err, &perr)
	require.Equal(t, 429, perr.Status)
	require.Equal(t, providers.ClassRetryable, perr.Class)
	require.Equal(t, "7s", perr.RetryAfter.String())
}
