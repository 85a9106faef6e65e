package providers_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/providers"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// sent performs one call and returns what the server received.
func sent(t *testing.T, req providers.Request, edit ...func(*providers.OpenAIOptions)) modeltest.RecordedRequest {
	t.Helper()
	srv := newServer(t, modeltest.Text("ok"))
	_, err := newProvider(srv, edit...).Chat(testContext(t), req, nil)
	require.NoError(t, err)
	reqs := srv.Requests()
	require.Len(t, reqs, 1)
	return reqs[0]
}

func ptr[T any](v T) *T { return &v }

var readFileTool = chat.ToolDefinition{
	Name:        "read_file",
	Description: "Read a file",
	Parameters:  json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
}

func TestRequestMaxTokens(t *testing.T) {
	req := userRequest("hi")
	req.MaxTokens = 4096

	got := sent(t, req)
	require.Equal(t, 4096, got.MaxTokens)
	require.NotContains(t, got.Fields, "max_completion_tokens")

	got = sent(t, req, func(o *providers.OpenAIOptions) { o.UseMaxCompletionTokens = true })
	require.Equal(t, 4096, got.MaxCompletionTokens)
	require.NotContains(t, got.Fields, "max_tokens")

	req.Model = "openai/gpt-5-mini"
	got = sent(t, req)
	require.Equal(t, 4096, got.MaxCompletionTokens, "reasoning families always get max_completion_tokens")
	require.NotContains(t, got.Fields, "max_tokens")

	req.MaxTokens = 0
	got = sent(t, req)
	require.NotContains(t, got.Fields, "max_tokens")
	require.NotContains(t, got.Fields, "max_completion_tokens")
}

func TestRequestTemperature(t *testing.T) {
	req := userRequest("hi")
	got := sent(t, req)
	require.NotContains(t, got.Fields, "temperature", "nil temperature is omitted")

	req.Temperature = ptr(0.0)
	got = sent(t, req)
	require.NotNil(t, got.Temperature, "temperature 0 is sent, unlike go-openai's omitempty float")
	require.Equal(t, 0.0, *got.Temperature)

	req.Temperature = ptr(0.7)
	got = sent(t, req)
	require.Equal(t, 0.7, *got.Temperature)

	req.Model = "o3-mini"
	got = sent(t, req)
	require.Nil(t, got.Temperature, "reasoning models reject temperature")

	req.ReasoningEffort = "none"
	got = sent(t, req)
	require.Equal(t, 0.7, *got.Temperature, "unless reasoning is off")
	require.Equal(t, "none", got.ReasoningEffort)
}

func TestRequestToolChoice(t *testing.T) {
	req := userRequest("hi")
	got := sent(t, req)
	require.NotContains(t, got.Fields, "tools")
	require.NotContains(t, got.Fields, "tool_choice", "no tool_choice without tools")

	req.Tools = []chat.ToolDefinition{readFileTool, {Name: "list_dir", Description: "List"}}
	got = sent(t, req)
	require.Equal(t, "auto", got.ToolChoice)
	require.Len(t, got.Tools, 2)
	require.Equal(t, readFileTool.Name, got.Tools[0].Name)
	require.JSONEq(t, string(readFileTool.Parameters), string(got.Tools[0].Parameters))
	require.JSONEq(t, `{"type":"object","properties":{}}`, string(got.Tools[1].Parameters))

	req.ToolChoice = providers.ToolChoiceNone
	got = sent(t, req)
	require.Equal(t, "none", got.ToolChoice)
	require.Len(t, got.Tools, 2, "tools stay listed so history with tool calls stays valid")

	req.ToolChoice = "read_file"
	got = sent(t, req)
	require.JSONEq(t, `{"type":"function","function":{"name":"read_file"}}`, got.ToolChoice)
}

func TestRequestStreamOptions(t *testing.T) {
	got := sent(t, streamRequest("hi"))
	require.True(t, got.Stream)
	require.True(t, got.IncludeUsage)

	got = sent(t, userRequest("hi"))
	require.False(t, got.Stream)
	require.NotContains(t, got.Fields, "stream_options")
}

func TestRequestExtraBodyHeadersQuery(t *testing.T) {
	req := userRequest("hi")
	req.ReasoningEffort = "high"
	req.ExtraBody = map[string]any{
		"chat_template_kwargs": map[string]any{"enable_thinking": false},
		"top_k":                20,
		"model":                "overridden-model",
	}
	got := sent(t, req, func(o *providers.OpenAIOptions) {
		o.ExtraHeaders = map[string]string{"HTTP-Referer": "https://github.com/HKUDS/nanobot"}
		o.ExtraQuery = map[string]string{"api-version": "2024-10-21"}
	})
	require.JSONEq(t, `{"enable_thinking":false}`, string(got.Fields["chat_template_kwargs"]))
	require.JSONEq(t, `20`, string(got.Fields["top_k"]))
	require.Equal(t, "overridden-model", got.Model, "extra body is merged last")
	require.Equal(t, "high", got.ReasoningEffort)
	require.Equal(t, "https://github.com/HKUDS/nanobot", got.Header.Get("HTTP-Referer"))
	require.Equal(t, "/v1/chat/completions", got.Path)
	require.Equal(t, "2024-10-21", got.Query.Get("api-version"))
}

func TestRequestMessages(t *testing.T) {
	parts := json.RawMessage(`[{"type":"text","text":"what is this?"},{"type":"text","text":""},{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"},"_meta":{"path":"/tmp/a.png"}}]`)
	req := providers.Request{
		Model: "test-model",
		Messages: []chat.Message{
			{Role: chat.RoleSystem, Content: "You are nanobot."},
			{Role: chat.RoleUser, Content: "what is this?", ContentParts: parts},
			{
				Role:             chat.RoleAssistant,
				ReasoningContent: "need to read it",
				ToolCalls: []chat.ToolCall{
					{ID: "call_1", Type: "function", Function: chat.FunctionCall{Name: "read_file", Arguments: `{"path":"a"}`}},
					{ID: "call_2", Function: chat.FunctionCall{Name: "list_dir"}},
				},
			},
			{Role: chat.RoleTool, ToolCallID: "call_1", Name: "read_file", Content: "file body"},
			{Role: chat.RoleTool, ToolCallID: "call_2", Name: "list_dir", Content: ""},
			{Role: chat.RoleUser, Content: ""},
			// Journal bookkeeping never reaches the wire.
			{Role: chat.RoleAssistant, Content: "done", Turn: "t1", EntryID: "e1", Timestamp: "2024-01-01T00:00:00"},
		},
	}
	got := sent(t, req)

	var wire []map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(got.Fields["messages"], &wire))
	require.Len(t, wire, 7)

	require.JSONEq(t, `"You are nanobot."`, string(wire[0]["content"]))
	require.JSONEq(t, `[{"type":"text","text":"what is this?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}}]`,
		string(wire[1]["content"]), "empty text parts and _meta are dropped")

	require.NotContains(t, wire[2], "content", "a tool-call-only assistant turn has no content")
	require.JSONEq(t, `"need to read it"`, string(wire[2]["reasoning_content"]))
	require.JSONEq(t, `[
		{"id":"call_1","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"a\"}"}},
		{"id":"call_2","type":"function","function":{"name":"list_dir","arguments":"{}"}}
	]`, string(wire[2]["tool_calls"]))

	require.JSONEq(t, `"call_1"`, string(wire[3]["tool_call_id"]))
	require.JSONEq(t, `"read_file"`, string(wire[3]["name"]))
	require.JSONEq(t, `"file body"`, string(wire[3]["content"]))
	require.JSONEq(t, `"(empty)"`, string(wire[4]["content"]), "blank content is replaced like nanobot does")
	require.JSONEq(t, `"(empty)"`, string(wire[5]["content"]))

	for _, k := range []string{"_turn", "_id", "timestamp"} {
		require.NotContains(t, wire[6], k)
	}
	require.Equal(t, "what is this?", got.Messages[1].Content)
}
