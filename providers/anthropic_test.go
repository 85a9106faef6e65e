package providers_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/providers"
	"github.com/nanobot-durable/nanobot/providers/aimocktest"
)

// claude builds the configured model "anthropic/<model>" against aimock,
// the way the worker does: resolution, factory, bound settings.
func claude(t *testing.T, srv *aimocktest.Server, model string, effort *string) providers.Model {
	t.Helper()
	cfg := testConfig(map[string]config.ProviderConfig{"anthropic": {APIKey: "sk-ant-test", APIBase: srv.URL() + "/v1"}})
	d := &cfg.Agents.Defaults
	d.Model, d.Provider, d.MaxTokens, d.ReasoningEffort = "anthropic/"+model, "auto", 1024, effort
	m, err := (&providers.Factory{Getenv: noEnv}).Model(cfg, "")
	require.NoError(t, err)
	require.Equal(t, "anthropic", m.ProviderName)
	require.Equal(t, model, m.APIModel)
	return m
}

// messagesBody is the part of a Messages API request the tests read.
type messagesBody struct {
	Model     string            `json:"model"`
	MaxTokens int               `json:"max_tokens"`
	Stream    bool              `json:"stream"`
	System    []json.RawMessage `json:"system"`
	Messages  []struct {
		Role    string            `json:"role"`
		Content []json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools       []json.RawMessage `json:"tools"`
	ToolChoice  json.RawMessage   `json:"tool_choice"`
	Thinking    json.RawMessage   `json:"thinking"`
	Output      json.RawMessage   `json:"output_config"`
	Temperature *float64          `json:"temperature"`
}

func lastMessagesBody(t *testing.T, srv *aimocktest.Server) messagesBody {
	t.Helper()
	reqs := srv.Requests()
	require.NotEmpty(t, reqs)
	last := reqs[len(reqs)-1]
	require.Equal(t, "/v1/messages", last.Path)
	var b messagesBody
	last.JSON(t, &b)
	return b
}

func collect(deltas *[]providers.Delta) func(providers.Delta) {
	return func(d providers.Delta) { *deltas = append(*deltas, d) }
}

func joined(deltas []providers.Delta) (content, reasoning string) {
	var c, r strings.Builder
	for _, d := range deltas {
		c.WriteString(d.Content)
		r.WriteString(d.Reasoning)
	}
	return c.String(), r.String()
}

func TestAnthropicTextTurn(t *testing.T) {
	srv := aimocktest.Start(t, aimocktest.Fixtures(t,
		map[string]any{"match": map[string]any{"userMessage": "hello"},
			"response": map[string]any{"content": "Hi there, how can I help?", "usage": map[string]any{"input_tokens": 12, "output_tokens": 7}}},
	))
	m := claude(t, srv, "claude-sonnet-4-5", nil)
	for _, stream := range []bool{false, true} {
		req := providers.Request{Stream: stream, Messages: []chat.Message{
			{Role: chat.RoleSystem, Content: "You are nanobot."},
			{Role: chat.RoleUser, Content: "hello"},
		}}
		var deltas []providers.Delta
		resp, err := m.Provider.Chat(testContext(t), req, collect(&deltas))
		require.NoError(t, err, "stream=%v", stream)
		require.Equal(t, "Hi there, how can I help?", resp.Content)
		require.Equal(t, providers.FinishStop, resp.FinishReason, "end_turn is stop")
		require.Equal(t, "anthropic/claude-sonnet-4-5", resp.Model)
		require.Equal(t, "anthropic", resp.Provider)
		if stream {
			content, _ := joined(deltas)
			require.Equal(t, resp.Content, content, "the text streamed in deltas")
			require.Greater(t, len(deltas), 1)
			require.Equal(t, 7, resp.Usage.CompletionTokens)
		} else {
			require.Empty(t, deltas)
			require.Equal(t, providers.Usage{PromptTokens: 12, CompletionTokens: 7, TotalTokens: 19}, resp.Usage)
		}
		reqs := srv.Requests()
		last := reqs[len(reqs)-1]
		require.Equal(t, "sk-ant-test", last.Header.Get("X-Api-Key"))
		require.NotEmpty(t, last.Header.Get("Anthropic-Version"))
		require.Empty(t, last.Header.Get("Authorization"))
		body := lastMessagesBody(t, srv)
		require.Equal(t, "claude-sonnet-4-5", body.Model, "the vendor prefix is not sent")
		require.Equal(t, 1024, body.MaxTokens)
		require.Equal(t, stream, body.Stream)
		require.Len(t, body.System, 1)
		require.JSONEq(t, `{"type":"text","text":"You are nanobot.","cache_control":{"type":"ephemeral"}}`, string(body.System[0]))
		require.NotNil(t, body.Temperature, "no thinking: the preset's temperature is sent")
	}
	require.Len(t, srv.Journal(t), 2, "aimock answered both")
}

func TestAnthropicStreamedToolRoundTrip(t *testing.T) {
	srv := aimocktest.Start(t, aimocktest.Fixtures(t,
		map[string]any{"match": map[string]any{"userMessage": "weather in Paris", "hasToolResult": false},
			"response": map[string]any{"toolCalls": []any{
				map[string]any{"id": "toolu_w", "name": "get_weather", "arguments": map[string]any{"city": "Paris"}},
				map[string]any{"id": "toolu_t", "name": "get_time", "arguments": map[string]any{"tz": "Europe/Paris"}},
			}}},
		map[string]any{"match": map[string]any{"userMessage": "weather in Paris", "hasToolResult": true},
			"response": map[string]any{"content": "It is 18C and sunny in Paris, 14:00."}},
	))
	m := claude(t, srv, "claude-sonnet-4-5", nil)
	tools := []chat.ToolDefinition{
		{Name: "get_weather", Description: "Weather of a city", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)},
		{Name: "get_time", Description: "Time in a zone", Parameters: json.RawMessage(`{"type":"object","properties":{"tz":{"type":"string"}}}`)},
	}
	history := []chat.Message{{Role: chat.RoleSystem, Content: "sys"}, {Role: chat.RoleUser, Content: "weather in Paris?"}}
	var deltas []providers.Delta
	resp, err := m.Provider.Chat(testContext(t), providers.Request{Stream: true, Messages: history, Tools: tools}, collect(&deltas))
	require.NoError(t, err)
	require.Equal(t, providers.FinishToolCalls, resp.FinishReason, "tool_use is tool_calls")
	require.Empty(t, resp.Content)
	require.Equal(t, []chat.ToolCall{
		{ID: "toolu_w", Type: "function", Function: chat.FunctionCall{Name: "get_weather", Arguments: `{"city":"Paris"}`}},
		{ID: "toolu_t", Type: "function", Function: chat.FunctionCall{Name: "get_time", Arguments: `{"tz":"Europe/Paris"}`}},
	}, resp.ToolCalls, "both parallel calls, arguments assembled from their deltas")
	first := lastMessagesBody(t, srv)
	require.Len(t, first.Tools, 2)
	require.JSONEq(t, `{"name":"get_weather","description":"Weather of a city","input_schema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}`,
		withoutCacheControl(t, first.Tools[0]))
	require.JSONEq(t, `{"type":"auto"}`, string(first.ToolChoice))

	history = append(history,
		chat.Message{Role: chat.RoleAssistant, ToolCalls: resp.ToolCalls},
		chat.Message{Role: chat.RoleTool, ToolCallID: "toolu_w", Name: "get_weather", Content: "18C, sunny"},
		chat.Message{Role: chat.RoleTool, ToolCallID: "toolu_t", Name: "get_time", Content: "14:00"},
	)
	deltas = nil
	resp, err = m.Provider.Chat(testContext(t), providers.Request{Stream: true, Messages: history, Tools: tools}, collect(&deltas))
	require.NoError(t, err)
	require.Equal(t, "It is 18C and sunny in Paris, 14:00.", resp.Content)
	content, _ := joined(deltas)
	require.Equal(t, resp.Content, content)

	second := lastMessagesBody(t, srv)
	require.Len(t, second.Messages, 3, "user, assistant with both tool_use blocks, user with both results")
	require.Equal(t, "assistant", second.Messages[1].Role)
	require.JSONEq(t, `{"type":"tool_use","id":"toolu_w","name":"get_weather","input":{"city":"Paris"}}`, string(second.Messages[1].Content[0]))
	require.JSONEq(t, `{"type":"tool_use","id":"toolu_t","name":"get_time","input":{"tz":"Europe/Paris"}}`, withoutCacheControl(t, second.Messages[1].Content[1]))
	require.Equal(t, "user", second.Messages[2].Role)
	require.JSONEq(t, `{"type":"tool_result","tool_use_id":"toolu_w","content":[{"type":"text","text":"18C, sunny"}]}`, string(second.Messages[2].Content[0]))
	require.JSONEq(t, `{"type":"tool_result","tool_use_id":"toolu_t","content":[{"type":"text","text":"14:00"}]}`, string(second.Messages[2].Content[1]))
}

// withoutCacheControl drops a block's cache_control, for comparing the rest.
func withoutCacheControl(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(raw, &m))
	delete(m, "cache_control")
	b, err := json.Marshal(m)
	require.NoError(t, err)
	return string(b)
}

// A 1×1 PNG.
const pixelPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="

func TestAnthropicImage(t *testing.T) {
	srv := aimocktest.Start(t, aimocktest.Fixtures(t,
		map[string]any{"match": map[string]any{"userMessage": "what is in this picture"},
			"response": map[string]any{"content": "A single pixel."}},
	))
	m := claude(t, srv, "claude-sonnet-4-5", nil)
	parts, err := json.Marshal([]map[string]any{
		{"type": "image_url", "image_url": map[string]any{"url": "data:image/png;base64," + pixelPNG}},
		{"type": "text", "text": "what is in this picture?\n[image: /ws/media/p.png]"},
	})
	require.NoError(t, err)
	resp, err := m.Provider.Chat(testContext(t), providers.Request{Messages: []chat.Message{
		{Role: chat.RoleUser, Content: "what is in this picture?", ContentParts: parts},
	}}, nil)
	require.NoError(t, err)
	require.Equal(t, "A single pixel.", resp.Content)
	body := lastMessagesBody(t, srv)
	require.Len(t, body.Messages, 1)
	require.Len(t, body.Messages[0].Content, 2)
	require.JSONEq(t, `{"type":"image","source":{"type":"base64","media_type":"image/png","data":"`+pixelPNG+`"}}`, string(body.Messages[0].Content[0]))
	require.JSONEq(t, `{"type":"text","text":"what is in this picture?\n[image: /ws/media/p.png]"}`, string(body.Messages[0].Content[1]))
}

func TestAnthropicThinking(t *testing.T) {
	srv := aimocktest.Start(t, aimocktest.Fixtures(t,
		map[string]any{"match": map[string]any{"userMessage": "how much is 6 times 7", "hasToolResult": false},
			"response": map[string]any{"reasoning": "I should use the calculator.", "toolCalls": []any{
				map[string]any{"id": "toolu_calc", "name": "calc", "arguments": map[string]any{"expr": "6*7"}}}}},
		map[string]any{"match": map[string]any{"userMessage": "how much is 6 times 7", "hasToolResult": true},
			"response": map[string]any{"reasoning": "The tool said 42.", "content": "42."}},
	))
	tools := []chat.ToolDefinition{{Name: "calc", Description: "Arithmetic", Parameters: json.RawMessage(`{"type":"object","properties":{"expr":{"type":"string"}}}`)}}
	for _, stream := range []bool{false, true} {
		m := claude(t, srv, "claude-sonnet-4-5", ptr("high"))
		history := []chat.Message{{Role: chat.RoleUser, Content: "how much is 6 times 7?"}}
		var deltas []providers.Delta
		resp, err := m.Provider.Chat(testContext(t), providers.Request{Stream: stream, Messages: history, Tools: tools}, collect(&deltas))
		require.NoError(t, err, "stream=%v", stream)
		require.Equal(t, "I should use the calculator.", resp.ReasoningContent)
		require.Len(t, resp.ToolCalls, 1)
		require.Contains(t, string(resp.ThinkingBlocks), `"signature":"`, "the thinking block keeps its signature")
		if stream {
			_, reasoning := joined(deltas)
			require.Equal(t, resp.ReasoningContent, reasoning, "thinking streams as reasoning deltas")
		}
		body := lastMessagesBody(t, srv)
		require.JSONEq(t, `{"type":"enabled","budget_tokens":8192}`, string(body.Thinking), "high: max(8192, max_tokens)")
		require.Equal(t, 8192+4096, body.MaxTokens, "max_tokens makes room for the budget")
		require.NotNil(t, body.Temperature)
		require.Equal(t, 1.0, *body.Temperature, "thinking runs at temperature 1")
		require.JSONEq(t, `{"type":"auto"}`, string(body.ToolChoice))

		// The tool loop goes on with the signed thinking block replayed
		// first: aimock, like Anthropic, refuses the call without it.
		history = append(history,
			chat.Message{Role: chat.RoleAssistant, ToolCalls: resp.ToolCalls, ReasoningContent: resp.ReasoningContent, ThinkingBlocks: resp.ThinkingBlocks},
			chat.Message{Role: chat.RoleTool, ToolCallID: resp.ToolCalls[0].ID, Content: "42"})
		resp, err = m.Provider.Chat(testContext(t), providers.Request{Stream: stream, Messages: history, Tools: tools}, nil)
		require.NoError(t, err, "stream=%v", stream)
		require.Equal(t, "42.", resp.Content)
		require.Equal(t, "The tool said 42.", resp.ReasoningContent)
		body = lastMessagesBody(t, srv)
		var first map[string]any
		require.NoError(t, json.Unmarshal(body.Messages[1].Content[0], &first))
		require.Equal(t, "thinking", first["type"])
		require.NotEmpty(t, first["signature"])
	}

	// Models that only think adaptively take the effort itself, and no temperature.
	m := claude(t, srv, "claude-opus-4-7", ptr("medium"))
	_, err := m.Provider.Chat(testContext(t), providers.Request{Messages: []chat.Message{{Role: chat.RoleUser, Content: "how much is 6 times 7?"}}, Tools: tools}, nil)
	require.NoError(t, err)
	body := lastMessagesBody(t, srv)
	require.JSONEq(t, `{"type":"adaptive"}`, string(body.Thinking))
	require.JSONEq(t, `{"effort":"medium"}`, string(body.Output))
	require.Nil(t, body.Temperature)
	require.Equal(t, 1024, body.MaxTokens)
}

func TestAnthropicErrorsClassified(t *testing.T) {
	errFixture := func(msg string, status int, typ, text string, retryAfter int) map[string]any {
		resp := map[string]any{"error": map[string]any{"type": typ, "message": text}, "status": status}
		if retryAfter > 0 {
			resp["retryAfter"] = retryAfter
		}
		return map[string]any{"match": map[string]any{"userMessage": msg}, "response": resp}
	}
	srv := aimocktest.Start(t, aimocktest.Fixtures(t,
		errFixture("rate me", 429, "rate_limit_error", "Number of requests has exceeded your rate limit", 7),
		errFixture("overload me", 529, "overloaded_error", "Overloaded", 0),
		errFixture("break me", 500, "api_error", "Internal server error", 0),
		errFixture("reject me", 400, "invalid_request_error", "messages: roles must alternate", 0),
		errFixture("deny me", 401, "authentication_error", "invalid x-api-key", 0),
		errFixture("forbid me", 403, "permission_error", "Your API key does not have permission", 0),
		errFixture("bill me", 400, "invalid_request_error", "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.", 0),
	))
	m := claude(t, srv, "claude-sonnet-4-5", nil)
	cases := []struct {
		msg        string
		status     int
		class      providers.Class
		retryAfter time.Duration
	}{
		{"rate me", 429, providers.ClassRetryable, 7 * time.Second},
		{"overload me", 529, providers.ClassRetryable, 0},
		{"break me", 500, providers.ClassRetryable, 0},
		{"reject me", 400, providers.ClassNonRetryable, 0},
		{"deny me", 401, providers.ClassNonRetryable, 0},
		{"forbid me", 403, providers.ClassNonRetryable, 0},
		{"bill me", 400, providers.ClassArrears, 0},
	}
	for _, tc := range cases {
		for _, stream := range []bool{false, true} {
			_, err := m.Provider.Chat(testContext(t), providers.Request{Stream: stream, Messages: []chat.Message{{Role: chat.RoleUser, Content: tc.msg}}}, nil)
			var pe *providers.Error
			require.ErrorAs(t, err, &pe, "%s stream=%v", tc.msg, stream)
			require.Equal(t, tc.status, pe.Status, tc.msg)
			require.Equal(t, tc.class, pe.Class, "%s: %v", tc.msg, pe)
			require.Equal(t, tc.retryAfter, pe.RetryAfter, tc.msg)
			require.NotEmpty(t, pe.Message)
		}
	}
	_, err := m.Provider.Chat(testContext(t), providers.Request{Messages: []chat.Message{{Role: chat.RoleUser, Content: "rate me"}}}, nil)
	require.ErrorContains(t, err, "Error: 429 Number of requests has exceeded your rate limit")
}

// TestAnthropicCutStreamIsRetried: a stream that stops before message_stop
// is not taken as the answer.
func TestAnthropicCutStreamIsRetried(t *testing.T) {
	srv := aimocktest.Start(t, aimocktest.Fixtures(t,
		map[string]any{"match": map[string]any{"userMessage": "cut me"}, "truncateAfterChunks": 3,
			"response": map[string]any{"content": "This answer is long enough to come in several pieces, and it is cut."}},
	))
	m := claude(t, srv, "claude-sonnet-4-5", nil)
	_, err := m.Provider.Chat(testContext(t), providers.Request{Stream: true, Messages: []chat.Message{{Role: chat.RoleUser, Content: "cut me"}}}, nil)
	var pe *providers.Error
	require.ErrorAs(t, err, &pe)
	require.Equal(t, providers.ClassRetryable, pe.Class, "%v", pe)
}
