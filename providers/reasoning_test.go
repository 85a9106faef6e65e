package providers_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/providers"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// wireFor builds the model through a Factory with providers.<provider>
// pointing at a modeltest server, calls it once, and returns the request.
func wireFor(t *testing.T, provider, model string, effort *string, entry config.ProviderConfig, req providers.Request) modeltest.RecordedRequest {
	t.Helper()
	srv := newServer(t, modeltest.Text("ok"))
	entry.APIBase, entry.APIKey = srv.URL(), "sk-test"
	cfg := testConfig(map[string]config.ProviderConfig{provider: entry})
	d := &cfg.Agents.Defaults
	d.Model, d.Provider, d.MaxTokens, d.ReasoningEffort = model, provider, 1024, effort
	m, err := (&providers.Factory{Getenv: noEnv}).Model(cfg, "")
	require.NoError(t, err)
	resp, err := m.Provider.Chat(testContext(t), req, nil)
	require.NoError(t, err)
	require.Equal(t, model, resp.Model, "the configured name is reported")
	reqs := srv.Requests()
	require.Len(t, reqs, 1)
	return reqs[0]
}

const hi = `"messages":[{"role":"user","content":"hi"}],"stream":false`

// TestReasoningGoldenBodies pins the whole JSON body each thinking style sends.
func TestReasoningGoldenBodies(t *testing.T) {
	cases := []struct {
		name, provider, model string
		effort                *string
		entry                 config.ProviderConfig
		req                   *providers.Request
		golden                string
	}{
		{name: "openai high", provider: "openai", model: "gpt-4.1", effort: ptr("high"),
			golden: `{"model":"gpt-4.1",` + hi + `,"max_completion_tokens":1024,"reasoning_effort":"high"}`},
		{name: "openai none omits the effort", provider: "openai", model: "gpt-4.1", effort: ptr("none"),
			golden: `{"model":"gpt-4.1",` + hi + `,"max_completion_tokens":1024,"temperature":0.1}`},
		{name: "openai unset", provider: "openai", model: "gpt-4.1",
			golden: `{"model":"gpt-4.1",` + hi + `,"max_completion_tokens":1024,"temperature":0.1}`},
		{name: "deepseek high", provider: "deepseek", model: "deepseek-chat", effort: ptr("high"),
			golden: `{"model":"deepseek-chat",` + hi + `,"max_tokens":1024,"reasoning_effort":"high","thinking":{"type":"enabled"}}`},
		{name: "deepseek none", provider: "deepseek", model: "deepseek-chat", effort: ptr("none"),
			golden: `{"model":"deepseek-chat",` + hi + `,"max_tokens":1024,"temperature":0.1,"thinking":{"type":"disabled"}}`},
		{name: "deepseek unset keeps the provider default", provider: "deepseek", model: "deepseek-chat",
			golden: `{"model":"deepseek-chat",` + hi + `,"max_tokens":1024,"temperature":0.1}`},
		{name: "deepseek request overrides config", provider: "deepseek", model: "deepseek-chat", effort: ptr("high"),
			req:    &providers.Request{Messages: userRequest("hi").Messages, ReasoningEffort: "none"},
			golden: `{"model":"deepseek-chat",` + hi + `,"max_tokens":1024,"temperature":0.1,"thinking":{"type":"disabled"}}`},
		{name: "deepseek extraBody wins", provider: "deepseek", model: "deepseek-chat", effort: ptr("high"),
			entry:  config.ProviderConfig{ExtraBody: map[string]any{"thinking": map[string]any{"type": "disabled"}, "top_k": 20.0}},
			golden: `{"model":"deepseek-chat",` + hi + `,"max_tokens":1024,"reasoning_effort":"high","thinking":{"type":"disabled"},"top_k":20}`},
		{name: "dashscope high", provider: "dashscope", model: "qwen-plus", effort: ptr("high"),
			golden: `{"model":"qwen-plus",` + hi + `,"max_tokens":1024,"reasoning_effort":"high","enable_thinking":true}`},
		{name: "dashscope none", provider: "dashscope", model: "qwen-plus", effort: ptr("none"),
			golden: `{"model":"qwen-plus",` + hi + `,"max_tokens":1024,"temperature":0.1,"enable_thinking":false}`},
		{name: "zhipu high", provider: "zhipu", model: "glm-4.6", effort: ptr("high"),
			golden: `{"model":"glm-4.6",` + hi + `,"max_tokens":1024,"reasoning_effort":"high","thinking":{"type":"enabled"}}`},
		{name: "zhipu none", provider: "zhipu", model: "glm-4.6", effort: ptr("none"),
			golden: `{"model":"glm-4.6",` + hi + `,"max_tokens":1024,"temperature":0.1,"thinking":{"type":"disabled"}}`},
		{name: "moonshot kimi high drops reasoning_effort", provider: "moonshot", model: "kimi-k2.5", effort: ptr("high"),
			golden: `{"model":"kimi-k2.5",` + hi + `,"max_tokens":1024,"thinking":{"type":"enabled"}}`},
		{name: "moonshot kimi none", provider: "moonshot", model: "kimi-k2.5", effort: ptr("none"),
			golden: `{"model":"kimi-k2.5",` + hi + `,"max_tokens":1024,"temperature":0.1,"thinking":{"type":"disabled"}}`},
		{name: "moonshot other model", provider: "moonshot", model: "moonshot-v1-8k", effort: ptr("medium"),
			golden: `{"model":"moonshot-v1-8k",` + hi + `,"max_tokens":1024,"reasoning_effort":"medium"}`},
		{name: "minimax high", provider: "minimax", model: "MiniMax-M2", effort: ptr("high"),
			golden: `{"model":"MiniMax-M2",` + hi + `,"max_tokens":1024,"reasoning_effort":"high","reasoning_split":true}`},
		{name: "minimax none", provider: "minimax", model: "MiniMax-M2", effort: ptr("none"),
			golden: `{"model":"MiniMax-M2",` + hi + `,"max_tokens":1024,"temperature":0.1,"reasoning_split":false}`},
		{name: "mistral low remaps to none", provider: "mistral", model: "mistral-medium-latest", effort: ptr("low"),
			golden: `{"model":"mistral-medium-latest",` + hi + `,"max_tokens":1024}`},
		{name: "mistral medium remaps to high", provider: "mistral", model: "mistral-medium-latest", effort: ptr("medium"),
			golden: `{"model":"mistral-medium-latest",` + hi + `,"max_tokens":1024,"reasoning_effort":"high"}`},
		{name: "mistral magistral reasons implicitly", provider: "mistral", model: "magistral-medium-latest", effort: ptr("high"),
			golden: `{"model":"magistral-medium-latest",` + hi + `,"max_tokens":1024}`},
		{name: "openrouter kimi gets native and gateway switches", provider: "openrouter", model: "moonshotai/kimi-k2.5", effort: ptr("high"),
			golden: `{"model":"moonshotai/kimi-k2.5",` + hi + `,"max_tokens":1024,"thinking":{"type":"enabled"},"reasoning":{"effort":"high"}}`},
		{name: "openrouter plain model", provider: "openrouter", model: "anthropic/claude-sonnet-4.5", effort: ptr("high"),
			golden: `{"model":"anthropic/claude-sonnet-4.5",` + hi + `,"max_tokens":1024,"reasoning_effort":"high"}`},
		{name: "volcengine high", provider: "volcengine", model: "doubao-seed-1-6", effort: ptr("high"),
			golden: `{"model":"doubao-seed-1-6",` + hi + `,"max_completion_tokens":1024,"reasoning_effort":"high","thinking":{"type":"enabled"}}`},
		{name: "xiaomi mimo none", provider: "xiaomi_mimo", model: "mimo-v2.5-pro", effort: ptr("none"),
			golden: `{"model":"mimo-v2.5-pro",` + hi + `,"max_tokens":1024,"temperature":0.1,"thinking":{"type":"disabled"}}`},
		{name: "gemini high", provider: "gemini", model: "gemini-2.5-flash", effort: ptr("high"),
			golden: `{"model":"gemini-2.5-flash",` + hi + `,"max_tokens":1024,"reasoning_effort":"high"}`},
		{name: "custom declares thinking_type", provider: "custom", model: "inhouse", effort: ptr("high"),
			entry:  config.ProviderConfig{ThinkingStyle: "thinking_type"},
			golden: `{"model":"inhouse",` + hi + `,"max_tokens":1024,"reasoning_effort":"high","thinking":{"type":"enabled"}}`},
		{name: "custom thinkingStyle none sends nothing", provider: "custom", model: "inhouse", effort: ptr("high"),
			entry:  config.ProviderConfig{ThinkingStyle: "none"},
			golden: `{"model":"inhouse",` + hi + `,"max_tokens":1024,"temperature":0.1}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := userRequest("hi")
			req.Model = ""
			if tc.req != nil {
				req = *tc.req
			}
			got := wireFor(t, tc.provider, tc.model, tc.effort, tc.entry, req)
			require.JSONEq(t, tc.golden, string(got.Body))
		})
	}
}

// TestReasoningEveryProvider runs every registry row with effort "high" and
// checks the shape its thinking style promises.
func TestReasoningEveryProvider(t *testing.T) {
	for _, s := range providers.Specs() {
		if s.Wire() != providers.BackendOpenAICompat {
			continue // the Messages API and Azure's deployments have tests of their own
		}
		t.Run(s.Name, func(t *testing.T) {
			got := wireFor(t, s.Name, "test-model", ptr("high"), config.ProviderConfig{}, userRequest("hi"))
			require.Equal(t, "test-model", got.Model)
			require.Equal(t, "high", got.ReasoningEffort)
			require.NotContains(t, got.Fields, "temperature", "reasoning replaces temperature")
			tokens := "max_tokens"
			if s.SupportsMaxCompletionTokens {
				tokens = "max_completion_tokens"
			}
			require.JSONEq(t, `1024`, string(got.Fields[tokens]))
			want := map[providers.ThinkingStyle]string{
				providers.ThinkingType: "thinking", providers.ThinkingEnable: "enable_thinking", providers.ThinkingSplit: "reasoning_split",
			}
			for style, field := range want {
				if style == s.ThinkingStyle {
					require.Contains(t, got.Fields, field)
				} else {
					require.NotContains(t, got.Fields, field)
				}
			}
			for k, v := range s.Headers {
				require.Equal(t, v, got.Header.Get(k))
			}
			require.Equal(t, "Bearer sk-test", got.Header.Get("Authorization"))
		})
	}
}

func TestReasoningParamsUnit(t *testing.T) {
	ds, _ := providers.LookupSpec("deepseek")
	wire, extra := ds.ReasoningParams("deepseek-chat", nil)
	require.Empty(t, wire)
	require.Nil(t, extra)
	wire, extra = ds.ReasoningParams("deepseek-chat", ptr("max"))
	require.Equal(t, "max", wire)
	b, _ := json.Marshal(extra)
	require.JSONEq(t, `{"thinking":{"type":"enabled"}}`, string(b))
}

// TestReasoningContentExposed: reasoning never reaches Content, through a Factory model.
func TestReasoningContentExposed(t *testing.T) {
	for name, step := range map[string]modeltest.Step{
		"reasoning_content": modeltest.Reasoning("weighing options").Text("answer"),
		"think tags":        modeltest.Text("<think>weighing options</think>answer"),
	} {
		for _, stream := range []bool{false, true} {
			t.Run(name, func(t *testing.T) {
				srv := newServer(t, step)
				cfg := testConfig(map[string]config.ProviderConfig{"deepseek": {APIKey: "k", APIBase: srv.URL()}})
				cfg.Agents.Defaults.Model = "deepseek-reasoner"
				m, err := (&providers.Factory{Getenv: noEnv}).Model(cfg, "")
				require.NoError(t, err)
				req := userRequest("hi")
				req.Stream = stream
				var seen string
				resp, err := m.Provider.Chat(testContext(t), req, func(d providers.Delta) { seen += d.Content })
				require.NoError(t, err)
				require.Equal(t, "answer", resp.Content)
				require.Equal(t, "weighing options", resp.ReasoningContent)
				require.Equal(t, "deepseek", resp.Provider)
				if stream {
					require.Equal(t, "answer", seen, "reasoning is not streamed as content")
				}
			})
		}
	}
}
