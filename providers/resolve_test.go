package providers_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/providers"
)

// testConfig is config.Default() (every provider slot present but empty)
// with the given entries filled in.
func testConfig(entries map[string]config.ProviderConfig) *config.Config {
	cfg := config.Default()
	for name, p := range entries {
		cfg.Providers[name] = p
	}
	return cfg
}

func noEnv(string) string { return "" }

func envOf(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func keyed(key string) config.ProviderConfig { return config.ProviderConfig{APIKey: key} }

func TestResolveExplicitEveryProvider(t *testing.T) {
	for _, s := range providers.Specs() {
		t.Run(s.Name, func(t *testing.T) {
			entry := keyed("k-" + s.Name)
			if s.DefaultAPIBase == "" {
				entry.APIBase = "http://127.0.0.1:9/v1"
			}
			cfg := testConfig(map[string]config.ProviderConfig{s.Name: entry})
			res, err := providers.ResolveEnv(cfg, config.ModelPreset{Model: s.Name + "/some-model", Provider: s.Name}, noEnv)
			require.NoError(t, err)
			require.Equal(t, s.Name, res.ProviderName)
			require.Equal(t, "explicit provider", res.Reason)
			require.Equal(t, "k-"+s.Name, res.APIKey)
			require.Equal(t, "providers."+s.Name+".apiKey", res.KeySource)
			if s.DefaultAPIBase != "" {
				require.Equal(t, s.DefaultAPIBase, res.APIBase)
			}
			require.Equal(t, "some-model", res.APIModel, "the serving provider's own prefix is dropped")
		})
	}
}

func TestResolveKeywordEveryProvider(t *testing.T) {
	for _, s := range providers.Specs() {
		for _, kw := range s.Keywords {
			t.Run(s.Name+"/"+kw, func(t *testing.T) {
				entry := keyed("k")
				if s.DefaultAPIBase == "" {
					entry.APIBase = "http://127.0.0.1:9"
				}
				cfg := testConfig(map[string]config.ProviderConfig{s.Name: entry})
				model := "x-" + kw + "-1"
				res, err := providers.ResolveEnv(cfg, config.ModelPreset{Model: model, Provider: "auto"}, noEnv)
				require.NoError(t, err)
				require.Equal(t, s.Name, res.ProviderName)
				require.True(t, strings.HasPrefix(res.Reason, "keyword '"), res.Reason)
				require.Equal(t, model, res.APIModel)
			})
		}
	}
}

func TestResolveKeyPrefixEveryProvider(t *testing.T) {
	for _, s := range providers.Specs() {
		if s.DetectByKeyPrefix == "" {
			continue
		}
		t.Run(s.Name, func(t *testing.T) {
			// The key sits under another slot: its prefix still names the provider.
			cfg := testConfig(map[string]config.ProviderConfig{"custom": keyed(s.DetectByKeyPrefix + "abc")})
			res, err := providers.ResolveEnv(cfg, config.ModelPreset{Model: "acme/model-1", Provider: "auto"}, noEnv)
			require.NoError(t, err)
			require.Equal(t, s.Name, res.ProviderName)
			require.Equal(t, "custom", res.ConfigName)
			require.Equal(t, "key prefix "+s.DetectByKeyPrefix, res.Reason)
			require.Equal(t, s.DefaultAPIBase, res.APIBase)
			require.Equal(t, s.DetectByKeyPrefix+"abc", res.APIKey)
		})
	}
}

func TestResolveBaseKeywordEveryProvider(t *testing.T) {
	for _, s := range providers.Specs() {
		if s.DetectByBaseKeyword == "" {
			continue
		}
		t.Run(s.Name, func(t *testing.T) {
			base := "http://gw.example/" + s.DetectByBaseKeyword + "/v1"
			cfg := testConfig(map[string]config.ProviderConfig{"custom": {APIKey: "k", APIBase: base}})
			res, err := providers.ResolveEnv(cfg, config.ModelPreset{Model: "acme/model-1", Provider: "auto"}, noEnv)
			require.NoError(t, err)
			require.Equal(t, s.Name, res.ProviderName)
			require.Equal(t, "base URL contains '"+s.DetectByBaseKeyword+"'", res.Reason)
			require.Equal(t, base, res.APIBase, "the configured base is kept")
		})
	}
}

func TestResolveAuto(t *testing.T) {
	cases := []struct {
		name     string
		entries  map[string]config.ProviderConfig
		env      func(string) string
		model    string
		provider string
		want     string // provider name
		reason   string
		apiModel string
		apiBase  string
		key      string
	}{
		{name: "model prefix beats keyword", model: "openrouter/deepseek/deepseek-r1",
			entries: map[string]config.ProviderConfig{"deepseek": keyed("sk-ds"), "openrouter": keyed("sk-or-1")},
			want:    "openrouter", reason: "model prefix 'openrouter/'", apiModel: "deepseek/deepseek-r1", apiBase: "https://openrouter.ai/api/v1"},
		{name: "own prefix stripped", model: "deepseek/deepseek-chat",
			entries: map[string]config.ProviderConfig{"deepseek": keyed("sk-ds")},
			want:    "deepseek", reason: "model prefix 'deepseek/'", apiModel: "deepseek-chat", apiBase: "https://api.deepseek.com"},
		{name: "keyword", model: "deepseek-chat",
			entries: map[string]config.ProviderConfig{"deepseek": keyed("sk-ds"), "openai": keyed("sk-oa")},
			want:    "deepseek", reason: "keyword 'deepseek' in model name", apiModel: "deepseek-chat"},
		{name: "gateway keeps vendor prefix", model: "anthropic/claude-opus-4-5",
			entries: map[string]config.ProviderConfig{"openrouter": keyed("sk-or-v1-x")},
			want:    "openrouter", reason: "key prefix sk-or-", apiModel: "anthropic/claude-opus-4-5"},
		{name: "openrouter key under openai", model: "anthropic/claude-opus-4-5",
			entries: map[string]config.ProviderConfig{"openai": keyed("sk-or-v1-x")},
			want:    "openrouter", reason: "key prefix sk-or-", apiBase: "https://openrouter.ai/api/v1", key: "sk-or-v1-x"},
		{name: "aihubmix strips every prefix", model: "anthropic/claude-3-5-sonnet",
			entries: map[string]config.ProviderConfig{"custom": {APIKey: "k", APIBase: "https://aihubmix.com/v1"}},
			want:    "aihubmix", reason: "base URL contains 'aihubmix'", apiModel: "claude-3-5-sonnet"},
		{name: "ollama by port", model: "llama3.2",
			entries: map[string]config.ProviderConfig{"custom": {APIBase: "http://localhost:11434/v1"}},
			want:    "ollama", reason: "base URL contains '11434'", apiModel: "llama3.2"},
		{name: "local server with base", model: "Qwen/Qwen3-8B",
			entries: map[string]config.ProviderConfig{"vllm": {APIBase: "http://gpu-box:8000/v1"}},
			want:    "vllm", reason: "local provider with apiBase", apiModel: "Qwen/Qwen3-8B", apiBase: "http://gpu-box:8000/v1"},
		{name: "unconfigured local by prefix", model: "ollama/llama3",
			want: "ollama", reason: "model prefix 'ollama/'", apiModel: "llama3", apiBase: "http://localhost:11434/v1"},
		{name: "first configured", model: "anthropic/claude-opus-4-5",
			entries: map[string]config.ProviderConfig{"deepseek": keyed("sk-ds")},
			want:    "deepseek", reason: "first configured provider", apiModel: "anthropic/claude-opus-4-5"},
		{name: "gateways first in fallback", model: "mystery-model",
			entries: map[string]config.ProviderConfig{"deepseek": keyed("sk-ds"), "siliconflow": keyed("sk-sf")},
			want:    "siliconflow", reason: "first configured provider"},
		{name: "env key", model: "deepseek-chat", env: envOf("DEEPSEEK_API_KEY", "sk-env"),
			want: "deepseek", reason: "keyword 'deepseek' in model name", key: "sk-env"},
		{name: "config key wins over env", model: "deepseek-chat", env: envOf("DEEPSEEK_API_KEY", "sk-env"),
			entries: map[string]config.ProviderConfig{"deepseek": keyed("sk-cfg")},
			want:    "deepseek", key: "sk-cfg"},
		{name: "env-only provider as last resort", model: "mystery-model", env: envOf("GROQ_API_KEY", "gsk"),
			want: "groq", reason: "first configured provider", key: "gsk"},
		{name: "explicit camelCase name", model: "local-model", provider: "lmStudio",
			want: "lm_studio", reason: "explicit provider", apiBase: "http://localhost:1234/v1"},
		{name: "explicit custom name", model: "my-gateway/foo", provider: "my-gateway",
			entries: map[string]config.ProviderConfig{"my_gateway": {APIKey: "k", APIBase: "https://gw.example/v1"}},
			want:    "my_gateway", reason: "explicit provider", apiModel: "foo", apiBase: "https://gw.example/v1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := tc.env
			if env == nil {
				env = noEnv
			}
			provider := tc.provider
			if provider == "" {
				provider = "auto"
			}
			res, err := providers.ResolveEnv(testConfig(tc.entries), config.ModelPreset{Model: tc.model, Provider: provider}, env)
			require.NoError(t, err)
			require.Equal(t, tc.want, res.ProviderName)
			require.Equal(t, tc.model, res.Model)
			check := func(want, got string) {
				if want != "" {
					require.Equal(t, want, got)
				}
			}
			check(tc.reason, res.Reason)
			check(tc.apiModel, res.APIModel)
			check(tc.apiBase, res.APIBase)
			check(tc.key, res.APIKey)
		})
	}
}

func TestResolveErrors(t *testing.T) {
	_, err := providers.ResolveEnv(testConfig(nil), config.ModelPreset{Model: "anthropic/claude-opus-4-5", Provider: "auto"}, noEnv)
	require.Same(t, providers.ErrNoModel, err)
	require.Equal(t, "no model provider is configured: set providers.<name>.apiKey "+
		"(and apiBase for a self-hosted or compatible server) in config.json, "+
		"or export OPENAI_API_KEY and OPENAI_BASE_URL", err.Error())

	_, err = providers.ResolveEnv(testConfig(nil), config.ModelPreset{Model: "deepseek-chat", Provider: "deepseek"}, noEnv)
	require.ErrorIs(t, err, providers.ErrNoModel)
	require.Contains(t, err.Error(), "set providers.deepseek.apiKey in config.json or export DEEPSEEK_API_KEY")

	_, err = providers.ResolveEnv(testConfig(nil), config.ModelPreset{Model: "m", Provider: "custom"}, noEnv)
	require.ErrorIs(t, err, providers.ErrNoModel)
	require.Contains(t, err.Error(), "set providers.custom.apiBase")

	_, err = providers.ResolveEnv(testConfig(map[string]config.ProviderConfig{"custom": keyed("k")}),
		config.ModelPreset{Model: "m", Provider: "custom"}, noEnv)
	require.ErrorIs(t, err, providers.ErrNoModel, "a key without a base is not enough for a custom server")
	require.Contains(t, err.Error(), "set providers.custom.apiBase")

	_, err = providers.ResolveEnv(testConfig(nil), config.ModelPreset{Model: "m", Provider: "nosuch"}, noEnv)
	require.ErrorIs(t, err, providers.ErrNoModel)
	require.Contains(t, err.Error(), `"nosuch" is not a known provider`)
}

func TestResolveThinkingStyleOverride(t *testing.T) {
	cfg := testConfig(map[string]config.ProviderConfig{"custom": {APIBase: "http://127.0.0.1:9/v1", ThinkingStyle: "thinking_type"}})
	res, err := providers.ResolveEnv(cfg, config.ModelPreset{Model: "m", Provider: "custom"}, noEnv)
	require.NoError(t, err)
	require.Equal(t, providers.ThinkingType, res.Spec.ThinkingStyle)
}

func TestResolutionRedacted(t *testing.T) {
	cfg := testConfig(map[string]config.ProviderConfig{"deepseek": keyed("sk-secret-123")})
	res, err := providers.ResolveEnv(cfg, config.ModelPreset{Model: "deepseek-chat", Provider: "auto"}, noEnv)
	require.NoError(t, err)
	for _, s := range []string{res.String(), res.Redacted(), fmt.Sprintf("%v", res), fmt.Sprintf("%+v", res), fmt.Sprint(res.LogValue())} {
		require.NotContains(t, s, "sk-secret-123")
	}
	require.Contains(t, res.Redacted(), "key from providers.deepseek.apiKey")
	require.True(t, errors.Is(&providers.ConfigError{Msg: "x"}, providers.ErrNoModel))
}

func TestLookupSpecAndNames(t *testing.T) {
	s, ok := providers.LookupSpec("lm-studio")
	require.True(t, ok)
	require.Equal(t, "lm_studio", s.Name)
	_, ok = providers.LookupSpec("xiaomiMimo")
	require.True(t, ok)
	seen := map[string]bool{}
	for _, s := range providers.Specs() {
		require.False(t, seen[s.Name], "duplicate %s", s.Name)
		seen[s.Name] = true
	}
	for _, name := range []string{"openai", "openrouter", "deepseek", "gemini", "anthropic", "dashscope", "moonshot", "zhipu",
		"mistral", "groq", "siliconflow", "volcengine", "minimax", "ollama", "vllm", "lm_studio", "custom"} {
		require.True(t, seen[name], "registry lacks %s", name)
	}
}
