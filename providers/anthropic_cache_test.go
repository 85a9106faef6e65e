package providers_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/providers"
	"github.com/nanobot-durable/nanobot/providers/aimocktest"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

const runtimeContext = "[Runtime Context — metadata only, not instructions]\nChannel: cli\nChat ID: direct\n[/Runtime Context]"

// rawBody is a request body kept as raw JSON, to compare bytes.
type rawBody struct {
	System   json.RawMessage `json:"system"`
	Tools    json.RawMessage `json:"tools"`
	Messages []struct {
		Role    string            `json:"role"`
		Content []json.RawMessage `json:"content"`
	} `json:"messages"`
}

func cached(block json.RawMessage) bool {
	return bytes.Contains(block, []byte(`"cache_control":{"type":"ephemeral"}`))
}

func TestAnthropicPromptCacheBreakpoints(t *testing.T) {
	srv := aimocktest.Start(t, aimocktest.Fixtures(t,
		map[string]any{"match": map[string]any{"userMessage": "turn one"}, "response": map[string]any{"content": "answer one"}},
		map[string]any{"match": map[string]any{"userMessage": "turn two", "hasToolResult": false},
			"response": map[string]any{"toolCalls": []any{map[string]any{"id": "toolu_r", "name": "read_file", "arguments": map[string]any{"path": "a.txt"}}}}},
		map[string]any{"match": map[string]any{"userMessage": "turn two", "hasToolResult": true}, "response": map[string]any{"content": "answer two"}},
	))
	m := claude(t, srv, "claude-sonnet-4-5", nil)
	schema := json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)
	tools := []chat.ToolDefinition{
		{Name: "read_file", Description: "Read a file", Parameters: schema},
		{Name: "write_file", Description: "Write a file", Parameters: schema},
		{Name: "mcp_fs_list", Description: "List (MCP)", Parameters: schema},
	}
	system := chat.Message{Role: chat.RoleSystem, Content: "# nanobot\nYou are a helpful agent.\n" + strings.Repeat("Stable prompt line.\n", 50)}
	call := func(history ...chat.Message) rawBody {
		t.Helper()
		_, err := m.Provider.Chat(testContext(t), providers.Request{Stream: true, Messages: append([]chat.Message{system}, history...), Tools: tools}, nil)
		require.NoError(t, err)
		reqs := srv.Requests()
		raw := reqs[len(reqs)-1].Body
		require.LessOrEqual(t, bytes.Count(raw, []byte(`"cache_control"`)), 4, "Anthropic takes at most four breakpoints")
		var b rawBody
		require.NoError(t, json.Unmarshal(raw, &b))
		return b
	}
	userTurn := func(text string) chat.Message {
		return chat.Message{Role: chat.RoleUser, Content: text + "\n\n" + runtimeContext}
	}

	// Turn 1: the system prompt and the tools carry breakpoints; a lone
	// user message does not (nothing before it is history).
	t1 := call(userTurn("turn one"))
	var sys []json.RawMessage
	require.NoError(t, json.Unmarshal(t1.System, &sys))
	require.Len(t, sys, 1)
	require.True(t, cached(sys[0]), "system: %s", sys[0])
	var tl []json.RawMessage
	require.NoError(t, json.Unmarshal(t1.Tools, &tl))
	require.False(t, cached(tl[0]), "read_file")
	require.True(t, cached(tl[1]), "write_file, the last built-in tool")
	require.True(t, cached(tl[2]), "the last tool")
	require.Len(t, t1.Messages, 1)
	require.False(t, cached(t1.Messages[0].Content[0]))

	// Turn 2 (the history as the journal replays it: no runtime context in
	// old turns): the same system and tools bytes, and a breakpoint on the
	// turn before the new message, which stays after it.
	t2 := call(chat.Message{Role: chat.RoleUser, Content: "turn one"}, chat.Message{Role: chat.RoleAssistant, Content: "answer one"}, userTurn("turn two"))
	require.Equal(t, string(t1.System), string(t2.System), "the cached system prompt is byte-identical")
	require.Equal(t, string(t1.Tools), string(t2.Tools), "the cached tools are byte-identical")
	require.Len(t, t2.Messages, 3)
	require.True(t, cached(t2.Messages[1].Content[0]), "the last stable history block: %s", t2.Messages[1].Content[0])
	last := t2.Messages[2].Content
	require.False(t, cached(last[len(last)-1]), "the newest message is after every breakpoint")
	require.Contains(t, string(last[len(last)-1]), "[Runtime Context", "the runtime context rides in the uncached tail")
	for i, msg := range t2.Messages[:2] {
		for _, b := range msg.Content {
			require.NotContains(t, string(b), "Runtime Context", "message %d", i)
		}
	}

	// Within the turn the tool loop moves the breakpoint to the call.
	t3 := call(chat.Message{Role: chat.RoleUser, Content: "turn one"}, chat.Message{Role: chat.RoleAssistant, Content: "answer one"}, userTurn("turn two"),
		chat.Message{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{{ID: "toolu_r", Type: "function", Function: chat.FunctionCall{Name: "read_file", Arguments: `{"path":"a.txt"}`}}}},
		chat.Message{Role: chat.RoleTool, ToolCallID: "toolu_r", Content: "hello"})
	require.Len(t, t3.Messages, 5)
	require.True(t, cached(t3.Messages[3].Content[0]), "the tool_use block: %s", t3.Messages[3].Content[0])
	require.False(t, cached(t3.Messages[4].Content[0]), "the tool result is the new tail")
	require.False(t, cached(t3.Messages[1].Content[0]), "only one history breakpoint")
	require.Equal(t, string(t1.System), string(t3.System))
}

// TestAnthropicCachedTokensInUsage reads cache reads and writes back into
// Usage. aimock's Claude fixtures carry only input and output tokens, so
// this serves Anthropic's documented usage fields from a stub at the wire.
func TestAnthropicCachedTokensInUsage(t *testing.T) {
	usage := `{"input_tokens":21,"cache_creation_input_tokens":112,"cache_read_input_tokens":1800,"output_tokens":9}`
	stub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Stream bool `json:"stream"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		if !req.Stream {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"cached hello"}],"stop_reason":"end_turn","stop_sequence":null,"usage":%s}`, usage)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range []string{
			`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":` + strings.Replace(usage, `"output_tokens":9`, `"output_tokens":1`, 1) + `}}`,
			`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"cached hello"}}`,
			`{"type":"content_block_stop","index":0}`,
			`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":9}}`,
			`{"type":"message_stop"}`,
		} {
			var typ struct {
				Type string `json:"type"`
			}
			require.NoError(t, json.Unmarshal([]byte(ev), &typ))
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ.Type, ev)
		}
	}))
	t.Cleanup(stub.Close)
	cfg := testConfig(map[string]config.ProviderConfig{"anthropic": {APIKey: "sk-ant-test", APIBase: stub.URL}})
	cfg.Agents.Defaults.Model = "claude-sonnet-4-5"
	m, err := (&providers.Factory{Getenv: noEnv}).Model(cfg, "")
	require.NoError(t, err)
	for _, stream := range []bool{false, true} {
		resp, err := m.Provider.Chat(testContext(t), providers.Request{Stream: stream, Messages: []chat.Message{{Role: chat.RoleUser, Content: "hi"}}}, nil)
		require.NoError(t, err)
		require.Equal(t, "cached hello", resp.Content)
		require.Equal(t, providers.Usage{PromptTokens: 21 + 112 + 1800, CompletionTokens: 9, TotalTokens: 21 + 112 + 1800 + 9,
			CachedTokens: 1800, CacheWriteTokens: 112}, resp.Usage, "stream=%v", stream)
	}
}

// TestAnthropicStreamWithoutMessageStop: a stream that ends cleanly but
// early (a proxy closing it) is retried, not taken as the answer.
func TestAnthropicStreamWithoutMessageStop(t *testing.T) {
	stub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":3,\"output_tokens\":0}}}\n\n")
		fmt.Fprint(w, "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
		fmt.Fprint(w, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"half an ans\"}}\n\n")
	}))
	t.Cleanup(stub.Close)
	p := providers.NewAnthropic(providers.AnthropicOptions{BaseURL: stub.URL, APIKey: "k"})
	_, err := p.Chat(testContext(t), providers.Request{Model: "claude-sonnet-4-5", Stream: true, Messages: []chat.Message{{Role: chat.RoleUser, Content: "hi"}}}, nil)
	var pe *providers.Error
	require.ErrorAs(t, err, &pe)
	require.Equal(t, providers.ClassRetryable, pe.Class)
	require.Contains(t, pe.Message, "message_stop")
}

// TestAnthropicPromptCachingSwitch: providers.anthropic.promptCaching false
// sends no breakpoint, and the peer then bills the whole prompt as input;
// unset keeps them on.
func TestAnthropicPromptCachingSwitch(t *testing.T) {
	for _, on := range []*bool{nil, ptr(true), ptr(false)} {
		srv := modeltest.NewAnthropic(modeltest.Text("one"), modeltest.Text("two"))
		t.Cleanup(srv.Close)
		cfg := testConfig(map[string]config.ProviderConfig{"anthropic": {APIKey: "sk-ant-test", APIBase: srv.URL(), PromptCaching: on}})
		cfg.Agents.Defaults.Model = "anthropic/claude-sonnet-4-5"
		m, err := (&providers.Factory{Getenv: noEnv}).Model(cfg, "")
		require.NoError(t, err)
		system := chat.Message{Role: chat.RoleSystem, Content: strings.Repeat("Stable prompt line.\n", 300)}
		for _, user := range []string{"first", "second"} {
			_, err := m.Provider.Chat(testContext(t), providers.Request{Stream: true, Messages: []chat.Message{system, {Role: chat.RoleUser, Content: user}}}, nil)
			require.NoError(t, err)
		}
		reqs := srv.Requests()
		want := on == nil || *on
		require.Equal(t, want, bytes.Contains(reqs[1].Body, []byte(`"cache_control"`)), "caching on: %v", want)
		if want {
			require.Positive(t, reqs[1].Usage.CacheRead)
		} else {
			require.Equal(t, modeltest.CacheUsage{Input: reqs[1].Usage.Input}, reqs[1].Usage)
		}
	}
}
