package providers_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/providers"
	"github.com/nanobot-durable/nanobot/providers/aimocktest"
)

// weatherFixtures answer a tool round trip: two parallel calls, then text.
func weatherFixtures(t *testing.T) string {
	return aimocktest.Fixtures(t,
		map[string]any{"match": map[string]any{"userMessage": "weather in Paris", "hasToolResult": false},
			"response": map[string]any{"toolCalls": []any{
				map[string]any{"id": "call_w", "name": "get_weather", "arguments": map[string]any{"city": "Paris"}},
				map[string]any{"id": "call_t", "name": "get_time", "arguments": map[string]any{"tz": "Europe/Paris"}},
			}, "usage": map[string]any{"input_tokens": 30, "output_tokens": 12}}},
		map[string]any{"match": map[string]any{"userMessage": "weather in Paris", "hasToolResult": true},
			"response": map[string]any{"content": "It is 18C and sunny in Paris, 14:00."}},
	)
}

var weatherTools = []chat.ToolDefinition{
	{Name: "get_weather", Description: "Weather of a city", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)},
	{Name: "get_time", Description: "Time in a zone", Parameters: json.RawMessage(`{"type":"object","properties":{"tz":{"type":"string"}}}`)},
}

// roundTrip asks, answers both calls, asks again; it returns the final reply.
func roundTrip(t *testing.T, p providers.Provider, stream bool) (first, final *providers.Response) {
	t.Helper()
	history := []chat.Message{{Role: chat.RoleSystem, Content: "You are nanobot."}, {Role: chat.RoleUser, Content: "weather in Paris?"}}
	var deltas []providers.Delta
	first, err := p.Chat(testContext(t), providers.Request{Stream: stream, Messages: history, Tools: weatherTools}, collect(&deltas))
	require.NoError(t, err, "stream=%v", stream)
	require.Equal(t, providers.FinishToolCalls, first.FinishReason)
	require.Len(t, first.ToolCalls, 2)
	history = append(history, chat.Message{Role: chat.RoleAssistant, ToolCalls: first.ToolCalls},
		chat.Message{Role: chat.RoleTool, ToolCallID: first.ToolCalls[0].ID, Content: "18C, sunny"},
		chat.Message{Role: chat.RoleTool, ToolCallID: first.ToolCalls[1].ID, Content: "14:00"})
	deltas = nil
	final, err = p.Chat(testContext(t), providers.Request{Stream: stream, Messages: history, Tools: weatherTools}, collect(&deltas))
	require.NoError(t, err, "stream=%v", stream)
	require.Equal(t, "It is 18C and sunny in Paris, 14:00.", final.Content)
	require.Equal(t, providers.FinishStop, final.FinishReason)
	if stream {
		content, _ := joined(deltas)
		require.Equal(t, final.Content, content, "the answer streamed")
	}
	return first, final
}

// responsesBody is the part of a Responses API request the tests read.
type responsesBody struct {
	Model        string            `json:"model"`
	Instructions string            `json:"instructions"`
	Input        []json.RawMessage `json:"input"`
	Tools        []json.RawMessage `json:"tools"`
	ToolChoice   json.RawMessage   `json:"tool_choice"`
	Store        *bool             `json:"store"`
	Stream       bool              `json:"stream"`
	MaxOutput    int               `json:"max_output_tokens"`
	Reasoning    json.RawMessage   `json:"reasoning"`
	Temperature  *float64          `json:"temperature"`
}

func TestResponsesAPIToolCalls(t *testing.T) {
	srv := aimocktest.Start(t, weatherFixtures(t))
	cfg := testConfig(map[string]config.ProviderConfig{"openai": {APIKey: "sk-test", APIBase: srv.URL() + "/v1", APIType: "responses"}})
	d := &cfg.Agents.Defaults
	d.Model, d.Provider, d.MaxTokens = "gpt-4.1", "openai", 2048
	m, err := (&providers.Factory{Getenv: noEnv}).Model(cfg, "")
	require.NoError(t, err)
	for _, stream := range []bool{false, true} {
		first, _ := roundTrip(t, m.Provider, stream)
		require.Equal(t, "get_weather", first.ToolCalls[0].Function.Name)
		require.JSONEq(t, `{"city":"Paris"}`, first.ToolCalls[0].Function.Arguments)
		require.Regexp(t, `^call_w\|fc`, first.ToolCalls[0].ID, "the call id and its item id, for the replay")
		require.Regexp(t, `^call_t\|fc`, first.ToolCalls[1].ID)
		if !stream {
			require.Equal(t, 30, first.Usage.PromptTokens)
			require.Equal(t, 12, first.Usage.CompletionTokens)
		}

		reqs := srv.Requests()
		require.Len(t, reqs, 2*(map[bool]int{false: 1, true: 2}[stream]))
		last := reqs[len(reqs)-1]
		require.Equal(t, "/v1/responses", last.Path)
		require.Equal(t, "Bearer sk-test", last.Header.Get("Authorization"))
		var body responsesBody
		last.JSON(t, &body)
		require.Equal(t, "gpt-4.1", body.Model)
		require.Equal(t, "You are nanobot.", body.Instructions)
		require.Equal(t, stream, body.Stream)
		require.NotNil(t, body.Store)
		require.False(t, *body.Store, "stateless: the whole history goes every time")
		require.Equal(t, 2048, body.MaxOutput)
		require.NotNil(t, body.Temperature)
		require.JSONEq(t, `"auto"`, string(body.ToolChoice))
		require.JSONEq(t, `{"type":"function","name":"get_weather","description":"Weather of a city","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}`, string(body.Tools[0]))
		require.Len(t, body.Input, 5, "user, two calls, two outputs")
		require.JSONEq(t, `{"role":"user","content":[{"type":"input_text","text":"weather in Paris?"}]}`, string(body.Input[0]))
		var call, output map[string]any
		require.NoError(t, json.Unmarshal(body.Input[1], &call))
		require.Equal(t, "function_call", call["type"])
		require.Equal(t, "call_w", call["call_id"])
		require.Equal(t, "get_weather", call["name"])
		require.Regexp(t, `^fc`, call["id"])
		require.NoError(t, json.Unmarshal(body.Input[3], &output))
		require.Equal(t, map[string]any{"type": "function_call_output", "call_id": "call_w", "output": "18C, sunny"}, output)
	}
}

func TestResponsesAPIReasoningEffort(t *testing.T) {
	srv := aimocktest.Start(t, weatherFixtures(t))
	cfg := testConfig(map[string]config.ProviderConfig{"openai": {APIKey: "sk-test", APIBase: srv.URL() + "/v1", APIType: "responses"}})
	d := &cfg.Agents.Defaults
	d.Model, d.Provider, d.ReasoningEffort = "gpt-5", "openai", ptr("low")
	m, err := (&providers.Factory{Getenv: noEnv}).Model(cfg, "")
	require.NoError(t, err)
	_, err = m.Provider.Chat(testContext(t), providers.Request{Messages: []chat.Message{{Role: chat.RoleUser, Content: "weather in Paris?"}}, Tools: weatherTools}, nil)
	require.NoError(t, err)
	reqs := srv.Requests()
	var body responsesBody
	reqs[len(reqs)-1].JSON(t, &body)
	require.JSONEq(t, `{"effort":"low"}`, string(body.Reasoning))
	require.Nil(t, body.Temperature, "reasoning replaces temperature")
}

func TestAPITypeIsCheckedAtResolve(t *testing.T) {
	cfg := testConfig(map[string]config.ProviderConfig{"anthropic": {APIKey: "k", APIType: "responses"}})
	cfg.Agents.Defaults.Model = "anthropic/claude-sonnet-4-5"
	_, err := (&providers.Factory{Getenv: noEnv}).Model(cfg, "")
	require.ErrorContains(t, err, `providers.anthropic.apiType "responses"`)
	require.True(t, errors.Is(err, providers.ErrNoModel), "a config error")

	cfg = testConfig(map[string]config.ProviderConfig{"openai": {APIKey: "k", APIType: "completions"}})
	cfg.Agents.Defaults.Model, cfg.Agents.Defaults.Provider = "gpt-4.1", "openai"
	_, err = (&providers.Factory{Getenv: noEnv}).Model(cfg, "")
	require.ErrorContains(t, err, `providers.openai.apiType "completions" is not one of`)
}
