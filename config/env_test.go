package config

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestEnvOverrides(t *testing.T) {
	tests := []struct {
		name     string
		file     string
		env      []string
		check    func(t *testing.T, c *Config)
		warnings []string
		err      string
	}{
		{
			name:  "string",
			env:   []string{"NANOBOT_AGENTS__DEFAULTS__MODEL=openai/gpt-4.1"},
			check: func(t *testing.T, c *Config) { require.Equal(t, "openai/gpt-4.1", c.Agents.Defaults.Model) },
		},
		{
			name:  "int with snake segment overrides the file",
			file:  `{"agents": {"defaults": {"maxTokens": 5}}}`,
			env:   []string{"NANOBOT_AGENTS__DEFAULTS__MAX_TOKENS=100"},
			check: func(t *testing.T, c *Config) { require.Equal(t, 100, c.Agents.Defaults.MaxTokens) },
		},
		{
			name:  "env replaces the file's snake_case key without a duplicate warning",
			file:  `{"agents": {"defaults": {"max_tokens": 5}}}`,
			env:   []string{"NANOBOT_AGENTS__DEFAULTS__MAXTOKENS=7"},
			check: func(t *testing.T, c *Config) { require.Equal(t, 7, c.Agents.Defaults.MaxTokens) },
		},
		{
			name: "bool",
			env:  []string{"NANOBOT_TOOLS__RESTRICT_TO_WORKSPACE=false", "NANOBOT_CHANNELS__TELEGRAM__ENABLED=true"},
			check: func(t *testing.T, c *Config) {
				require.False(t, c.Tools.RestrictToWorkspaceOrDefault())
				var telegram struct {
					Enabled bool `json:"enabled"`
				}
				_, err := c.ChannelBlock("telegram", &telegram)
				require.NoError(t, err)
				require.True(t, telegram.Enabled)
			},
		},
		{
			name: "nested provider key",
			file: `{"providers": {"openrouter": {"apiBase": "https://o"}}}`,
			env:  []string{"NANOBOT_PROVIDERS__OPENROUTER__API_KEY=sk-or-env", "NANOBOT_PROVIDERS__AZURE_OPENAI__API_KEY=az"},
			check: func(t *testing.T, c *Config) {
				require.Equal(t, ProviderConfig{APIKey: "sk-or-env", APIBase: "https://o"}, c.Providers["openrouter"])
				require.Equal(t, "az", c.Providers["azure_openai"].APIKey)
			},
		},
		{
			name: "number-looking text for a string field stays text",
			env:  []string{"NANOBOT_PROVIDERS__DEEPSEEK__API_KEY=0123", "NANOBOT_AGENTS__DEFAULTS__BOT_NAME=true"},
			check: func(t *testing.T, c *Config) {
				require.Equal(t, "0123", c.Providers["deepseek"].APIKey)
				require.Equal(t, "true", c.Agents.Defaults.BotName)
			},
		},
		{
			name: "json array and map entry with defaults",
			env:  []string{`NANOBOT_TOOLS__SSRF_WHITELIST=["10.0.0.0/8"]`, "NANOBOT_TOOLS__MCP_SERVERS__FS__COMMAND=mcp-fs"},
			check: func(t *testing.T, c *Config) {
				require.Equal(t, []string{"10.0.0.0/8"}, c.Tools.SSRFWhitelist)
				require.Equal(t, MCPServer{Command: "mcp-fs", ToolTimeout: 30, EnabledTools: []string{"*"}}, c.Tools.MCPServers["fs"])
			},
		},
		{
			name: "whole object then a refinement",
			env:  []string{`NANOBOT_GATEWAY__HEARTBEAT={"enabled": false}`, "NANOBOT_GATEWAY__HEARTBEAT__INTERVAL_S=60"},
			check: func(t *testing.T, c *Config) {
				require.Equal(t, Heartbeat{Enabled: false, IntervalS: 60, KeepRecentMessages: 8}, c.Gateway.Heartbeat)
			},
		},
		{
			name:  "unknown channel block goes to Other",
			env:   []string{"NANOBOT_CHANNELS__DISCORD__TOKEN=d"},
			check: func(t *testing.T, c *Config) { require.JSONEq(t, `{"token":"d"}`, string(c.Channels.Other["discord"])) },
		},
		{
			name:  "model_presets spelling",
			env:   []string{"NANOBOT_MODEL_PRESETS__FAST__MODEL=m", "NANOBOT_AGENTS__DEFAULTS__MODEL_PRESET=fast"},
			check: func(t *testing.T, c *Config) { require.Equal(t, "m", c.ActiveModel().Model) },
		},
		{
			name:  "non-config variables are skipped",
			env:   []string{"NANOBOT_MAX_CONCURRENT_REQUESTS=4", "NANOBOT_LLM_TIMEOUT_S=x", "NANOBOT_CONFIG=/elsewhere.json", "HOME=/h", "NANOBOT_AGENTS__DEFAULTS__BOT_NAME=bob"},
			check: func(t *testing.T, c *Config) { require.Equal(t, "bob", c.Agents.Defaults.BotName) },
		},
		{
			name:     "unknown key under a known section warns",
			env:      []string{"NANOBOT_AGENTS__DEFAULTS__MODLE=x"},
			warnings: []string{"env NANOBOT_AGENTS__DEFAULTS__MODLE: agents.defaults.modle: unknown key; variable ignored"},
		},
		{
			name: "bad int",
			env:  []string{"NANOBOT_AGENTS__DEFAULTS__MAX_TOKENS=lots"},
			err:  `env NANOBOT_AGENTS__DEFAULTS__MAX_TOKENS: agents.defaults.maxTokens: want an integer, got string "lots"`,
		},
		{
			name: "bad bool",
			env:  []string{"NANOBOT_TOOLS__EXEC__ENABLE=yes"},
			err:  `env NANOBOT_TOOLS__EXEC__ENABLE: tools.exec.enable: want a boolean, got string "yes"`,
		},
		{
			name: "bad nested value inside a JSON env object",
			env:  []string{`NANOBOT_API={"port": "http"}`},
			err:  `env NANOBOT_API: api.port: want an integer, got string "http"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.json")
			if tt.file != "" {
				path = writeConfig(t, tt.file)
			}
			c, warns, err := LoadWithEnv(path, tt.env)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.warnings, nilIfEmpty(warningStrings(warns)))
			if tt.check != nil {
				tt.check(t, c)
			}
		})
	}
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

func TestOpenAIFallbacks(t *testing.T) {
	tests := []struct {
		name     string
		file     string
		env      []string
		wantKey  string
		wantBase string
	}{
		{"fills empty", "", []string{"OPENAI_API_KEY=sk-env", "OPENAI_BASE_URL=http://proxy/v1"}, "sk-env", "http://proxy/v1"},
		{"file wins", `{"providers": {"openai": {"apiKey": "sk-file", "apiBase": "http://file"}}}`, []string{"OPENAI_API_KEY=sk-env", "OPENAI_BASE_URL=http://proxy/v1"}, "sk-file", "http://file"},
		{"only missing half", `{"providers": {"openai": {"apiKey": "sk-file"}}}`, []string{"OPENAI_API_KEY=sk-env", "OPENAI_BASE_URL=http://proxy/v1"}, "sk-file", "http://proxy/v1"},
		{"NANOBOT_ var wins", "", []string{"OPENAI_API_KEY=sk-env", "NANOBOT_PROVIDERS__OPENAI__API_KEY=sk-nb"}, "sk-nb", ""},
		{"nothing set", "", nil, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.json")
			if tt.file != "" {
				path = writeConfig(t, tt.file)
			}
			c, _, err := LoadWithEnv(path, tt.env)
			require.NoError(t, err)
			require.Equal(t, tt.wantKey, c.Providers["openai"].APIKey)
			require.Equal(t, tt.wantBase, c.Providers["openai"].APIBase)
		})
	}
}
