package modeltest_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/providers"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// TestAnthropicServerBillsOurClientsBreakpoints drives the server with our
// own Anthropic provider (the SDK underneath), streamed and not: a tool
// round trip reads back, as cache reads in Usage, the prefix the first call
// wrote.
func TestAnthropicServerBillsOurClientsBreakpoints(t *testing.T) {
	for _, stream := range []bool{true, false} {
		srv := modeltest.NewAnthropic(
			modeltest.ToolCalls(modeltest.Call{ID: "toolu_1", Name: "read_file", Args: `{"path":"a.txt"}`}),
			modeltest.Text("It says hello."),
		)
		t.Cleanup(srv.Close)
		p := providers.NewAnthropic(providers.AnthropicOptions{BaseURL: srv.URL(), APIKey: "k", PromptCaching: true})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		t.Cleanup(cancel)
		system := chat.Message{Role: chat.RoleSystem, Content: "You are nanobot.\n" + strings.Repeat("A stable line of the system prompt.\n", 200)}
		tools := []chat.ToolDefinition{{Name: "read_file", Description: "Read a file", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}}
		history := []chat.Message{system, {Role: chat.RoleUser, Content: "read a.txt"}}

		first, err := p.Chat(ctx, providers.Request{Model: "claude-sonnet-4-5", Stream: stream, Messages: history, Tools: tools}, nil)
		require.NoError(t, err)
		require.Len(t, first.ToolCalls, 1)
		require.Equal(t, "read_file", first.ToolCalls[0].Function.Name)
		require.JSONEq(t, `{"path":"a.txt"}`, first.ToolCalls[0].Function.Arguments)
		reqs := srv.Requests()
		billed := reqs[0].Usage
		require.Zero(t, billed.CacheRead, "nothing is cached before the first call")
		require.Greater(t, billed.CacheWrite, 1024)
		require.Equal(t, providers.Usage{PromptTokens: billed.Total(), CompletionTokens: first.Usage.CompletionTokens,
			TotalTokens: billed.Total() + first.Usage.CompletionTokens, CacheWriteTokens: billed.CacheWrite}, first.Usage, "stream=%v", stream)

		history = append(history, chat.Message{Role: chat.RoleAssistant, ToolCalls: first.ToolCalls},
			chat.Message{Role: chat.RoleTool, ToolCallID: "toolu_1", Content: "hello"})
		second, err := p.Chat(ctx, providers.Request{Model: "claude-sonnet-4-5", Stream: stream, Messages: history, Tools: tools}, nil)
		require.NoError(t, err)
		require.Equal(t, "It says hello.", second.Content)
		reqs = srv.Requests()
		require.True(t, reqs[1].EndsWithToolResult())
		require.Equal(t, "read a.txt", reqs[1].LastUserText())
		require.Equal(t, billed.CacheWrite, reqs[1].Usage.CacheRead, "the prefix written by call 1 is read by call 2")
		require.Equal(t, reqs[1].Usage.CacheRead, second.Usage.CachedTokens)
		require.Equal(t, reqs[1].Usage.Total(), second.Usage.PromptTokens)
	}
}

// TestAnthropicServerWithoutBreakpointsBillsInput: with caching off the
// whole prompt is input every time.
func TestAnthropicServerWithoutBreakpointsBillsInput(t *testing.T) {
	srv := modeltest.NewAnthropic(modeltest.Text("one"), modeltest.Text("two"))
	t.Cleanup(srv.Close)
	p := providers.NewAnthropic(providers.AnthropicOptions{BaseURL: srv.URL(), APIKey: "k"})
	msgs := []chat.Message{{Role: chat.RoleSystem, Content: strings.Repeat("A stable line of the system prompt.\n", 200)}, {Role: chat.RoleUser, Content: "hi"}}
	for range 2 {
		resp, err := p.Chat(context.Background(), providers.Request{Model: "claude-sonnet-4-5", Stream: true, Messages: msgs}, nil)
		require.NoError(t, err)
		require.Zero(t, resp.Usage.CachedTokens)
		require.Zero(t, resp.Usage.CacheWriteTokens)
	}
	reqs := srv.Requests()
	require.Equal(t, reqs[0].Usage, reqs[1].Usage)
	require.Equal(t, reqs[0].Usage.Input, reqs[0].Usage.Total())
}

func TestAnthropicServerErrors(t *testing.T) {
	srv := modeltest.NewAnthropic(modeltest.Error(529, "", "Overloaded").Type("overloaded_error"))
	t.Cleanup(srv.Close)
	p := providers.NewAnthropic(providers.AnthropicOptions{BaseURL: srv.URL(), APIKey: "k"})
	_, err := p.Chat(context.Background(), providers.Request{Model: "claude-sonnet-4-5", Messages: []chat.Message{{Role: chat.RoleUser, Content: "hi"}}}, nil)
	var pe *providers.Error
	require.ErrorAs(t, err, &pe)
	require.Equal(t, 529, pe.Status)
	require.Equal(t, providers.ClassRetryable, pe.Class)
	_, err = p.Chat(context.Background(), providers.Request{Model: "claude-sonnet-4-5", Messages: []chat.Message{{Role: chat.RoleUser, Content: "hi"}}}, nil)
	require.ErrorContains(t, err, "script exhausted")
}
