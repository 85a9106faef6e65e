package providers_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/providers"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

func signatureConfig() *config.Config {
	cfg := testConfig(map[string]config.ProviderConfig{
		"deepseek":   {APIKey: "sk-ds-secret", ExtraHeaders: map[string]string{"X-A": "1"}},
		"openrouter": {APIKey: "sk-or-secret", ExtraBody: map[string]any{"top_k": 20.0}},
	})
	cfg.Agents.Defaults.Model = "deepseek-chat"
	cfg.ModelPresets["fast"] = config.ModelPreset{Model: "deepseek-chat", MaxTokens: 1024}
	cfg.Agents.Defaults.FallbackModels = []config.FallbackModel{{Model: "anthropic/claude-sonnet-4.5", Provider: "openrouter"}}
	return cfg
}

func TestSignature(t *testing.T) {
	base := providers.Signature(signatureConfig())
	require.Equal(t, base, providers.Signature(signatureConfig()), "same config, same signature")
	require.NotContains(t, base, "secret")

	same := []func(*config.Config){
		func(c *config.Config) { c.Agents.Defaults.Workspace = "/elsewhere" },
		func(c *config.Config) { c.Agents.Defaults.MaxToolIterations = 7 },
		func(c *config.Config) {
			require.NoError(t, c.SetChannelBlock("telegram", map[string]any{"enabled": true}))
		},
		func(c *config.Config) { c.Gateway.Port = 1 },
	}
	for i, edit := range same {
		cfg := signatureConfig()
		edit(cfg)
		require.Equal(t, base, providers.Signature(cfg), "unrelated change %d", i)
	}
	changed := map[string]func(*config.Config){
		"key": func(c *config.Config) {
			c.Providers["deepseek"] = config.ProviderConfig{APIKey: "sk-other", ExtraHeaders: map[string]string{"X-A": "1"}}
		},
		"base": func(c *config.Config) {
			p := c.Providers["openrouter"]
			p.APIBase = "https://x"
			c.Providers["openrouter"] = p
		},
		"header":     func(c *config.Config) { c.Providers["deepseek"].ExtraHeaders["X-A"] = "2" },
		"extra body": func(c *config.Config) { c.Providers["openrouter"].ExtraBody["top_k"] = 40.0 },
		"extra query": func(c *config.Config) {
			p := c.Providers["groq"]
			p.ExtraQuery = map[string]string{"v": "1"}
			c.Providers["groq"] = p
		},
		"api type":    func(c *config.Config) { p := c.Providers["openai"]; p.APIType = "responses"; c.Providers["openai"] = p },
		"model":       func(c *config.Config) { c.Agents.Defaults.Model = "deepseek-reasoner" },
		"temperature": func(c *config.Config) { c.Agents.Defaults.Temperature = 0.5 },
		"effort":      func(c *config.Config) { c.Agents.Defaults.ReasoningEffort = ptr("high") },
		"preset": func(c *config.Config) {
			c.ModelPresets["fast"] = config.ModelPreset{Model: "deepseek-chat", MaxTokens: 2048}
		},
		"fallback": func(c *config.Config) { c.Agents.Defaults.FallbackModels = nil },
		"thinkingStyle": func(c *config.Config) {
			p := c.Providers["custom"]
			p.ThinkingStyle = "none"
			c.Providers["custom"] = p
		},
		"promptCaching": func(c *config.Config) {
			p := c.Providers["openrouter"]
			p.PromptCaching = ptr(false)
			c.Providers["openrouter"] = p
		},
	}
	for name, edit := range changed {
		cfg := signatureConfig()
		edit(cfg)
		require.NotEqual(t, base, providers.Signature(cfg), name)
	}
}

func TestFactoryCachesUntilSignatureChanges(t *testing.T) {
	srv := newServer(t)
	cfg := testConfig(map[string]config.ProviderConfig{"deepseek": {APIKey: "k1", APIBase: srv.URL()}})
	cfg.Agents.Defaults.Model = "deepseek-chat"
	f := &providers.Factory{Getenv: noEnv}

	m1, err := f.Model(cfg, "")
	require.NoError(t, err)
	m2, err := f.Model(cfg, "")
	require.NoError(t, err)
	require.Same(t, m1.Provider, m2.Provider, "built once")

	require.False(t, f.Reload(cfg), "same signature: nothing rebuilt")
	cfg.Agents.Defaults.Workspace = "/tmp/elsewhere"
	require.False(t, f.Reload(cfg), "workspace does not affect clients")
	m3, _ := f.Model(cfg, "")
	require.Same(t, m1.Provider, m3.Provider)

	cfg.Providers["deepseek"] = config.ProviderConfig{APIKey: "k2", APIBase: srv.URL()}
	require.True(t, f.Reload(cfg), "a new key rebuilds")
	m4, err := f.Model(cfg, "")
	require.NoError(t, err)
	require.NotSame(t, m1.Provider, m4.Provider)
}

func TestFactoryEnvKeyChangeRebuilds(t *testing.T) {
	env := map[string]string{"DEEPSEEK_API_KEY": "a"}
	cfg := testConfig(nil)
	cfg.Agents.Defaults.Model = "deepseek-chat"
	f := &providers.Factory{Getenv: func(k string) string { return env[k] }}
	m1, err := f.Model(cfg, "")
	require.NoError(t, err)
	require.Equal(t, "env DEEPSEEK_API_KEY", m1.Resolution.KeySource)
	require.False(t, f.Reload(cfg))
	env["DEEPSEEK_API_KEY"] = "b"
	require.True(t, f.Reload(cfg))
}

func TestFactoryModelSelection(t *testing.T) {
	srv := newServer(t)
	cfg := testConfig(map[string]config.ProviderConfig{"deepseek": {APIKey: "k", APIBase: srv.URL()}})
	d := &cfg.Agents.Defaults
	d.Model, d.MaxTokens, d.Temperature = "deepseek-chat", 4096, 0.3
	cfg.ModelPresets["think"] = config.ModelPreset{Model: "deepseek/deepseek-reasoner", MaxTokens: 1000, Temperature: 0.6, ReasoningEffort: ptr("high")}
	f := &providers.Factory{Getenv: noEnv}

	m, err := f.Model(cfg, "")
	require.NoError(t, err)
	require.Equal(t, "deepseek-chat", m.Name)
	require.Equal(t, "deepseek", m.ProviderName)
	require.Equal(t, 4096, m.MaxTokens)
	require.Equal(t, 0.3, *m.Temperature)
	require.Nil(t, m.ReasoningEffort)
	_, isFallback := m.Provider.(*providers.FallbackProvider)
	require.False(t, isFallback, "no fallbackModels, no wrapper")

	m, err = f.Model(cfg, "think")
	require.NoError(t, err)
	require.Equal(t, "deepseek/deepseek-reasoner", m.Name)
	require.Equal(t, "deepseek-reasoner", m.APIModel)
	require.Equal(t, "high", *m.ReasoningEffort)
	require.Equal(t, 1000, m.MaxTokens)

	m, err = f.Model(cfg, "deepseek-v4-flash")
	require.NoError(t, err)
	require.Equal(t, "deepseek-v4-flash", m.APIModel)
	require.Equal(t, 4096, m.MaxTokens, "a bare model name keeps the active settings")

	cfg.Agents.Defaults.FallbackModels = []config.FallbackModel{{Model: "gpt-4.1", Provider: "openai"}}
	m, err = f.Model(cfg, "")
	require.NoError(t, err, "an unusable fallback does not break the primary")
	require.Len(t, m.Warnings, 1)
	require.Contains(t, m.Warnings[0], `fallback model "gpt-4.1" skipped`)
}

func TestFactoryModelError(t *testing.T) {
	_, err := (&providers.Factory{Getenv: noEnv}).Model(testConfig(nil), "")
	require.ErrorIs(t, err, providers.ErrNoModel)
}

func TestModelNeverLeaksKey(t *testing.T) {
	srv := newServer(t, modeltest.Text("ok"))
	cfg := testConfig(map[string]config.ProviderConfig{
		"deepseek": {APIKey: "sk-very-secret", APIBase: srv.URL()},
		"groq":     {APIKey: "gsk-very-secret"},
	})
	cfg.Agents.Defaults.Model = "deepseek-chat"
	cfg.Agents.Defaults.FallbackModels = []config.FallbackModel{{Model: "llama-3.3-70b", Provider: "groq"}}
	m, err := (&providers.Factory{Getenv: noEnv}).Model(cfg, "")
	require.NoError(t, err)

	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("model", "m", m, "res", m.Resolution)
	slog.New(slog.NewTextHandler(&buf, nil)).Info("model", "m", m, "res", m.Resolution)
	j, err := json.Marshal(m)
	require.NoError(t, err)
	for _, s := range []string{fmt.Sprintf("%v", m), fmt.Sprintf("%+v", m), m.Resolution.Redacted(), buf.String(), string(j)} {
		require.NotContains(t, s, "very-secret")
	}
}

func TestPresets(t *testing.T) {
	cfg := testConfig(nil)
	cfg.Agents.Defaults.Model = "deepseek-chat"
	cfg.ModelPresets["zeta"] = config.ModelPreset{Model: "z"}
	cfg.ModelPresets["alpha"] = config.ModelPreset{Model: "a", Provider: "openrouter"}
	require.Equal(t, []string{"alpha", "zeta"}, providers.PresetNames(cfg))

	p, ok := providers.PresetFor(cfg, "alpha")
	require.True(t, ok)
	require.Equal(t, "openrouter", p.Provider)
	_, ok = providers.PresetFor(cfg, "missing")
	require.False(t, ok)
	p, ok = providers.PresetFor(cfg, providers.DefaultPresetName)
	require.True(t, ok, `"default" is agents.defaults' own model`)
	require.Equal(t, "deepseek-chat", p.Model)

	cfg.ModelPresets["default"] = config.ModelPreset{Model: "own-default"}
	p, _ = providers.PresetFor(cfg, "default")
	require.Equal(t, "own-default", p.Model, "a preset named default wins")
	require.Nil(t, providers.PresetNames(nil))
}
