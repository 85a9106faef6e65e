package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func writeConfig(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.json")
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}

func warningStrings(ws []Warning) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.String()
	}
	return out
}

func TestDefault(t *testing.T) {
	c := Default()
	d := c.Agents.Defaults
	tests := []struct {
		name      string
		got, want any
	}{
		{"workspace", d.Workspace, "~/.nanobot/workspace"},
		{"model", d.Model, "anthropic/claude-opus-4-5"},
		{"provider", d.Provider, "auto"},
		{"maxTokens", d.MaxTokens, 8192},
		{"contextWindowTokens", d.ContextWindowTokens, 200000},
		{"contextBlockLimit", d.ContextBlockLimit, (*int)(nil)},
		{"temperature", d.Temperature, 0.1},
		{"fallbackModels", d.FallbackModels, []FallbackModel{}},
		{"maxToolIterations", d.MaxToolIterations, 200},
		{"maxConcurrentSubagents", d.MaxConcurrentSubagents, 1},
		{"failOnToolError", d.FailOnToolError, true},
		{"maxToolResultChars", d.MaxToolResultChars, 16000},
		{"providerRetryMode", d.ProviderRetryMode, "standard"},
		{"reasoningEffort", d.ReasoningEffort, (*string)(nil)},
		{"timezone", d.Timezone, "UTC"},
		{"timezoneMode", d.TimezoneMode, "auto"},
		{"botName", d.BotName, "nanobot"},
		{"botIcon", d.BotIcon, "🐈"},
		{"unifiedSession", d.UnifiedSession, false},
		{"idleCompactAfterMinutes", d.IdleCompactAfterMinutes, 15},
		{"idleCompactCheckIntervalSeconds", d.IdleCompactCheckIntervalSeconds, 60},
		{"consolidationRatio", d.ConsolidationRatio, 0.5},
		{"dream", d.Dream, Dream{Enabled: true, IntervalH: 2}},
		{"channels shared", []any{c.Channels.SendProgress, c.Channels.SendToolHints, c.Channels.ShowReasoning, c.Channels.SendMaxRetries}, []any{true, true, true, 3}},
		{"api", c.API, API{Host: "127.0.0.1", Port: 8900, Timeout: 120}},
		{"gateway port", c.Gateway.Port, 18790},
		{"heartbeat", c.Gateway.Heartbeat, Heartbeat{Enabled: true, IntervalS: 1800, KeepRecentMessages: 8}},
		{"restrictToWorkspace", c.Tools.RestrictToWorkspaceOrDefault(), true},
		{"exec timeout", c.Tools.Exec.Timeout, 60},
		{"exec enable", c.Tools.Exec.Enable, true},
		{"web search", c.Tools.Web.Search, WebSearch{Provider: "duckduckgo", MaxResults: 5, Timeout: 30}},
		{"jina", c.Tools.Web.Fetch.UseJinaReader, true},
		{"file enable", c.Tools.File.Enable, true},
		{"openrouter slot", c.Providers["openrouter"], ProviderConfig{}},
		{"presets", c.ModelPresets, map[string]ModelPreset{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, tt.got)
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nope", "config.json")
	c, warns, err := LoadWithEnv(path, nil)
	require.NoError(t, err)
	require.Empty(t, warns)
	require.False(t, c.Exists)
	require.Equal(t, path, c.Path)
	want := Default()
	want.Path = path
	require.Equal(t, want, c)
}

const realisticConfig = `{
  "agents": {
    "defaults": {
      "workspace": "~/bots/ws",
      "model": "openrouter/anthropic/claude-sonnet-4",
      "provider": "openrouter",
      "max_tokens": 4096.0,
      "contextWindowTokens": 128000,
      "temperature": 0.2,
      "maxToolIterations": null,
      "reasoning_effort": "high",
      "sessionTtlMinutes": 30,
      "disabledSkills": ["weather"],
      "dream": {"enabled": false, "interval_h": 6},
      "fallbackModels": ["cheap"],
      "memoryWindow": 100
    }
  },
  "modelPresets": {
    "cheap": {"model": "deepseek/deepseek-chat", "provider": "deepseek"}
  },
  "providers": {
    "openrouter": {"apiKey": "sk-or-1", "extraHeaders": {"X-Title": "nanobot"}},
    "azureOpenai": {"api_key": "az", "apiBase": "https://x.openai.azure.com"},
    "custom": {"apiBase": "http://localhost:8000/v1", "extraBody": {"top_k": 20, "tags": ["a"]}}
  },
  "channels": {
    "sendToolHints": false,
    "telegram": {"enabled": true, "token": "123:abc", "allowFrom": ["42"], "stream_edit_interval": 1},
    "slack": {"enabled": true, "botToken": "xoxb-1", "dm": {"policy": "allowlist"}},
    "discord": {"enabled": true, "token": "d1", "intents": 37377}
  },
  "gateway": {"heartbeat": {"intervalS": 600}},
  "tools": {
    "restrictToWorkspace": false,
    "exec": {"timeout": 0, "pathAppend": "/opt/bin"},
    "web": {"search": {"provider": "brave", "apiKey": "bk"}},
    "mcp_servers": {
      "github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {"GITHUB_TOKEN": "t"}}
    }
  },
  "transcription": {"provider": "groq"}
}`

func TestLoadRealisticFile(t *testing.T) {
	path := writeConfig(t, realisticConfig)
	c, warns, err := LoadWithEnv(path, nil)
	require.NoError(t, err)
	require.True(t, c.Exists)
	require.Equal(t, []string{
		"config " + path + ": agents.defaults.memoryWindow: unknown key",
	}, warningStrings(warns))

	d := c.Agents.Defaults
	high := "high"
	tests := []struct {
		name      string
		got, want any
	}{
		{"snake maxTokens from float", d.MaxTokens, 4096},
		{"camel key", d.ContextWindowTokens, 128000},
		{"null keeps default", d.MaxToolIterations, 200},
		{"snake pointer", d.ReasoningEffort, &high},
		{"alias", d.IdleCompactAfterMinutes, 30},
		{"untouched default", d.MaxToolResultChars, 16000},
		{"nested partial", d.Dream, Dream{Enabled: false, IntervalH: 6}},
		{"fallback preset", d.FallbackModels, []FallbackModel{{Preset: "cheap"}}},
		{"preset defaults filled", c.ModelPresets["cheap"], ModelPreset{Model: "deepseek/deepseek-chat", Provider: "deepseek", MaxTokens: 8192, ContextWindowTokens: 200000, Temperature: 0.1}},
		{"provider", c.Providers["openrouter"].ExtraHeaders, map[string]string{"X-Title": "nanobot"}},
		{"camel provider name canonicalised", c.Providers["azure_openai"].APIKey, "az"},
		{"no camel provider entry", func() bool { _, ok := c.Providers["azureOpenai"]; return ok }(), false},
		{"extraBody", c.Providers["custom"].ExtraBody, map[string]any{"top_k": 20.0, "tags": []any{"a"}}},
		{"other provider slots kept", c.Providers["anthropic"], ProviderConfig{}},
		{"channels shared", c.Channels.SendToolHints, false},
		{"discord raw", string(c.Channels.Other["discord"]), `{"enabled":true,"intents":37377,"token":"d1"}`},
		{"heartbeat merge", c.Gateway.Heartbeat, Heartbeat{Enabled: true, IntervalS: 600, KeepRecentMessages: 8}},
		{"restrict false", c.Tools.RestrictToWorkspaceOrDefault(), false},
		{"exec", []any{c.Tools.Exec.Timeout, c.Tools.Exec.PathAppend, c.Tools.Exec.Enable}, []any{0, "/opt/bin", true}},
		{"web search", c.Tools.Web.Search, WebSearch{Provider: "brave", APIKey: "bk", MaxResults: 5, Timeout: 30}},
		{"mcp defaults", c.Tools.MCPServers["github"], MCPServer{Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-github"}, Env: map[string]string{"GITHUB_TOKEN": "t"}, ToolTimeout: 30, EnabledTools: []string{"*"}}},
		{"transcription read", c.Transcription, Transcription{Enabled: true, Provider: "groq", MaxDurationSec: 120, MaxUploadMB: 25}},
		{"active model", c.ActiveModel().Model, "openrouter/anthropic/claude-sonnet-4"},
		{"fallbacks", c.Fallbacks()[0].Model, "deepseek/deepseek-chat"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, tt.got)
		})
	}
}

func TestLoadWarnings(t *testing.T) {
	path := writeConfig(t, `{
  "agents": {"defaults": {"maxTokens": 1, "max_tokens": 2, "modle": "x"}},
  "gatway": {},
  "channels": {"sendProgres": false, "matrix": {"enabled": true}},
  "providers": {"openai": {"apiKey": "k", "organisation": "o"}}
}`)
	c, warns, err := LoadWithEnv(path, nil)
	require.NoError(t, err)
	require.Equal(t, 1, c.Agents.Defaults.MaxTokens, "the camelCase spelling wins")
	require.JSONEq(t, `{"enabled": true}`, string(c.Channels.Other["matrix"]))
	src := "config " + path + ": "
	require.ElementsMatch(t, []string{
		src + `agents.defaults.max_tokens: same setting as "maxTokens", ignored`,
		src + "agents.defaults.modle: unknown key",
		src + "gatway: unknown key",
		src + "channels.sendProgres: unknown key (kept as is)",
		src + "providers.openai.organisation: unknown key",
	}, warningStrings(warns))
}

func TestFileErrors(t *testing.T) {
	tests := []struct {
		name string
		file string
		err  string // after "config <path>: "
	}{
		{"string for int", `{"agents": {"defaults": {"maxTokens": "lots"}}}`, `agents.defaults.maxTokens: want an integer, got string "lots"`},
		{"fraction for int", `{"agents": {"defaults": {"maxTokens": 1.5}}}`, `agents.defaults.maxTokens: want an integer, got number 1.5`},
		{"snake key named as written", `{"agents": {"defaults": {"max_tokens": true}}}`, `agents.defaults.max_tokens: want an integer, got boolean true`},
		{"bool", `{"tools": {"exec": {"enable": "no"}}}`, `tools.exec.enable: want a boolean, got string "no"`},
		{"string", `{"providers": {"openai": {"apiKey": 12}}}`, `providers.openai.apiKey: want a string, got number 12`},
		{"object", `{"gateway": {"heartbeat": []}}`, `gateway.heartbeat: want an object, got array`},
		{"array", `{"tools": {"mcpServers": {"x": {"args": "a b"}}}}`, `tools.mcpServers.x.args: want an array, got string "a b"`},
		{"array element", `{"agents": {"defaults": {"disabledSkills": ["a", 3]}}}`, `agents.defaults.disabledSkills[1]: want a string, got number 3`},
		{"float", `{"agents": {"defaults": {"temperature": "hot"}}}`, `agents.defaults.temperature: want a number, got string "hot"`},
		{"int overflow", `{"api": {"port": 1e300}}`, `api.port: want an integer, got number 1e300`},
		{"top level", `[1, 2]`, `want an object at the top level, got array`},
		{"fallback shape", `{"agents": {"defaults": {"fallbackModels": [7]}}}`, `agents.defaults.fallbackModels[0]: want a preset name or an object, got number 7`},
		{"fallback needs model", `{"agents": {"defaults": {"fallbackModels": [{"provider": "x"}]}}}`, `agents.defaults.fallbackModels[0].model: required`},
		{"unknown preset", `{"agents": {"defaults": {"modelPreset": "nope"}}}`, `agents.defaults.modelPreset: no preset "nope" in modelPresets`},
		{"unknown fallback preset", `{"agents": {"defaults": {"fallbackModels": ["nope"]}}}`, `agents.defaults.fallbackModels[0]: no preset "nope" in modelPresets`},
		{"ratio range", `{"agents": {"defaults": {"consolidationRatio": 2}}}`, `agents.defaults.consolidationRatio: 2 is outside 0.1–0.95`},
		{"retry mode", `{"agents": {"defaults": {"providerRetryMode": "forever"}}}`, `agents.defaults.providerRetryMode: "forever" is not one of standard, persistent`},
		{"images per turn", `{"tools": {"imageGeneration": {"maxImagesPerTurn": 9}}}`, `tools.imageGeneration.maxImagesPerTurn: 9 is outside 1..8`},
		{"image saveDir", `{"tools": {"imageGeneration": {"saveDir": "../out"}}}`, `tools.imageGeneration.saveDir: "../out" must be a relative path inside the workspace`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeConfig(t, tt.file)
			_, _, err := LoadWithEnv(path, nil)
			require.Error(t, err)
			require.Equal(t, "config "+path+": "+tt.err, err.Error())
			var ce *Error
			require.ErrorAs(t, err, &ce)
		})
	}
}

func TestMalformedJSON(t *testing.T) {
	tests := []struct {
		name string
		file string
		want string
	}{
		{"bad token", "{\n  \"agents\": {\n    \"defaults\": {\"model\": x}\n  }\n}", "line 3, column 27: invalid character 'x'"},
		{"trailing comma", "{\n  \"api\": {\"port\": 1,}\n}", "line 2, column 21: invalid character '}'"},
		{"truncated", "{\"api\": {", "line 1, column 9: unexpected end of JSON input"},
		{"empty", "", "line 1, column 1: unexpected end of JSON input"},
		{"trailing data", "{} {}", "line 1, column 4: invalid character '{' after top-level value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeConfig(t, tt.file)
			_, _, err := LoadWithEnv(path, nil)
			require.ErrorContains(t, err, "config "+path+": "+tt.want)
		})
	}
}

func TestFallbackModelsMixed(t *testing.T) {
	path := writeConfig(t, `{
  "modelPresets": {"fast": {"model": "groq/llama", "provider": "groq", "maxTokens": 1024}},
  "agents": {"defaults": {"reasoningEffort": "low", "fallbackModels": [
    "fast",
    {"model": "openai/gpt-4.1", "provider": "openai", "maxTokens": 2048, "reasoning_effort": "none"},
    {"model": "deepseek-chat"}
  ]}}
}`)
	c, warns, err := LoadWithEnv(path, nil)
	require.NoError(t, err)
	require.Empty(t, warns)
	n2048, none, low := 2048, "none", "low"
	require.Equal(t, []FallbackModel{
		{Preset: "fast"},
		{Model: "openai/gpt-4.1", Provider: "openai", MaxTokens: &n2048, ReasoningEffort: &none},
		{Model: "deepseek-chat", Provider: "auto"},
	}, c.Agents.Defaults.FallbackModels)

	fb := c.Fallbacks()
	require.Len(t, fb, 3)
	require.Equal(t, ModelPreset{Model: "groq/llama", Provider: "groq", MaxTokens: 1024, ContextWindowTokens: 200000, Temperature: 0.1}, fb[0])
	require.Equal(t, ModelPreset{Model: "openai/gpt-4.1", Provider: "openai", MaxTokens: 2048, ContextWindowTokens: 200000, Temperature: 0.1, ReasoningEffort: &none}, fb[1])
	require.Equal(t, ModelPreset{Model: "deepseek-chat", Provider: "auto", MaxTokens: 8192, ContextWindowTokens: 200000, Temperature: 0.1, ReasoningEffort: &low}, fb[2])

	out, err := json.Marshal(c.Agents.Defaults.FallbackModels)
	require.NoError(t, err)
	require.JSONEq(t, `["fast", {"model": "openai/gpt-4.1", "provider": "openai", "maxTokens": 2048, "reasoningEffort": "none"}, {"model": "deepseek-chat", "provider": "auto"}]`, string(out))
}

func TestSaveLoadRoundTrip(t *testing.T) {
	custom := Default()
	limit, effort := 40, "medium"
	custom.Agents.Defaults.ContextBlockLimit = &limit
	custom.Agents.Defaults.ReasoningEffort = &effort
	custom.Agents.Defaults.ModelPreset = "fast"
	custom.ModelPresets["fast"] = ModelPreset{Model: "m", Provider: "p", MaxTokens: 1, ContextWindowTokens: 2, Temperature: 0.3}
	custom.Agents.Defaults.FallbackModels = []FallbackModel{{Preset: "fast"}, {Model: "x", Provider: "auto"}}
	custom.Providers["openrouter"] = ProviderConfig{APIKey: "k", ExtraBody: map[string]any{"a": 1.0}, ExtraHeaders: map[string]string{"H": "v"}}
	custom.Channels.Other = map[string]json.RawMessage{"discord": json.RawMessage(`{"enabled":true}`)}
	custom.Channels.SendMaxRetries = 5
	custom.Transcription = Transcription{Enabled: true, Provider: "groq", Language: "en", MaxDurationSec: 60, MaxUploadMB: 25}
	custom.Tools.MCPServers["fs"] = MCPServer{Command: "c", ToolTimeout: 5, EnabledTools: []string{"read"}}
	off := false
	custom.Tools.RestrictToWorkspace = &off
	custom.Agents.Defaults.Dream.Cron = "0 3 * * *"

	tests := []struct {
		name string
		cfg  *Config
	}{
		{"defaults", Default()},
		{"customised", custom},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "sub", "config.json")
			require.NoError(t, Save(path, tt.cfg))
			c, warns, err := LoadWithEnv(path, []string{"TZ=UTC"}) // timezoneMode auto reads the host's zone
			require.NoError(t, err)
			require.Empty(t, warns)
			want := *tt.cfg
			want.Path, want.Exists = path, true
			require.Equal(t, &want, c)

			info, err := os.Stat(path)
			require.NoError(t, err)
			require.Equal(t, os.FileMode(0o600), info.Mode().Perm())
			entries, err := os.ReadDir(filepath.Dir(path))
			require.NoError(t, err)
			require.Len(t, entries, 1, "no temp file left behind")
		})
	}

	t.Run("writes camelCase keys", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "config.json")
		require.NoError(t, Save(path, Default()))
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		s := string(data)
		for _, key := range []string{`"maxTokens": 8192`, `"restrictToWorkspace": true`, `"mcpServers": {}`, `"botIcon": "🐈"`, `"keepRecentMessages": 8`, `"contextBlockLimit": null`, `"modelPreset": null`, `"cron": null`} {
			require.Contains(t, s, key)
		}
		require.NotContains(t, s, "max_tokens")
		require.True(t, strings.HasPrefix(s, "{\n  \"agents\": {\n    \"defaults\": {"), s[:40])
	})
}

func TestPathHelpers(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("NANOBOT_CONFIG", "")
	require.Equal(t, filepath.Join(home, ".nanobot", "config.json"), DefaultPath())
	t.Setenv("NANOBOT_CONFIG", "~/alt/config.json")
	require.Equal(t, filepath.Join(home, "alt", "config.json"), DefaultPath())

	tests := []struct{ in, want string }{
		{"~", home},
		{"~/x/y", filepath.Join(home, "x", "y")},
		{"/abs", "/abs"},
		{"~user/x", "~user/x"},
		{"", ""},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, ExpandHome(tt.in), tt.in)
	}

	d := Default().Agents.Defaults
	require.Equal(t, filepath.Join(home, ".nanobot", "workspace"), d.WorkspacePath())
	d.Workspace = "rel/ws"
	wd, err := os.Getwd()
	require.NoError(t, err)
	require.Equal(t, filepath.Join(wd, "rel", "ws"), d.WorkspacePath())

	require.Equal(t, filepath.Join(home, ".nanobot"), ConfigDir("~/.nanobot/config.json"))
	require.True(t, (&Tools{}).RestrictToWorkspaceOrDefault())

	// Load("") follows NANOBOT_CONFIG from the given environment.
	path := writeConfig(t, `{"api": {"port": 1}}`)
	c, _, err := LoadWithEnv("", []string{"NANOBOT_CONFIG=" + path})
	require.NoError(t, err)
	require.Equal(t, 1, c.API.Port)
}

func FuzzLoad(f *testing.F) {
	f.Add([]byte(realisticConfig), "AGENTS__DEFAULTS__MAX_TOKENS", "12")
	f.Add([]byte(`{"agents": {"defaults": {"fallbackModels": ["a", {"model": 1}]}}}`), "PROVIDERS__X__EXTRA_BODY", `{"a": [1, null]}`)
	f.Add([]byte(`{"channels": {"discord": null}, "transcription": 5}`), "CHANNELS__DISCORD__A__B", "null")
	f.Add([]byte(`[`), "API", `{"port": 1.0}`)
	f.Add([]byte(`{"providers": {"openai": null}, "tools": {"mcpServers": {"a": {"env": {"K": null}}}}}`), "TOOLS____X", "")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte, envName, envValue string) {
		path := filepath.Join(dir, "config.json")
		require.NoError(t, os.WriteFile(path, data, 0o600))
		c, _, err := LoadWithEnv(path, []string{"NANOBOT_" + envName + "=" + envValue})
		if err == nil {
			require.NotNil(t, c)
		}
	})
}
