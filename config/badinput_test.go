package config

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// badConfigs are malformed, oversized and wrongly-typed config files; each
// must fail to load with an error naming the file, and be left untouched.
var badConfigs = []string{
	`{"agents": []}`, `{"agents": "x"}`, `{"agents": {"defaults": 5}}`, `{"agents": {"defaults": {"model": 5}}}`,
	`{"agents": {"defaults": {"model": ["a"]}}}`, `{"agents": {"defaults": {"maxTokens": "lots"}}}`,
	`{"agents": {"defaults": {"maxTokens": {"n": 1}}}}`, `{"agents": {"defaults": {"maxTokens": 1.5e400}}}`,
	`{"agents": {"defaults": {"maxTokens": true}}}`, `{"agents": {"defaults": {"temperature": "hot"}}}`,
	`{"agents": {"defaults": {"maxToolIterations": "many"}}}`, `{"agents": {"defaults": {"workspace": 7}}}`,
	`{"agents": {"defaults": {"contextWindowTokens": [1]}}}`, `{"agents": {"defaults": {"disabledSkills": "a"}}}`,
	`{"providers": []}`, `{"providers": {"openai": "key"}}`, `{"providers": {"openai": {"apiKey": 5}}}`,
	`{"providers": {"openai": {"apiKey": ["a"]}}}`, `{"providers": {"openai": {"apiBase": {"u": 1}}}}`,
	`{"providers": {"custom": {"extraHeaders": "x"}}}`, `{"channels": []}`, `{"tools": []}`, `{"tools": {"exec": "on"}}`,
	`{"tools": {"exec": {"timeout": "1m"}}}`, `{"tools": {"exec": {"denyPatterns": "rm"}}}`,
	`{"tools": {"restrictToWorkspace": "true"}}`, `{"tools": {"mcpServers": []}}`, `{"tools": {"mcpServers": {"x": "cmd"}}}`,
	`{"tools": {"mcpServers": {"x": {"args": "a b"}}}}`, `{"tools": {"ssrfWhitelist": "10.0.0.0/8"}}`,
	`{"gateway": []}`, `{"api": {"port": "80"}}`, `{"api": {"port": 1e100}}`, `[]`, `"config"`, `42`, `null`, `true`,
	"\xff\xfe{}", "{\"agents\": {\"defaults\": {\"model\": \"\xff\"}}", `{"agents": {"defaults": {"model": "a"}}`,
	`{"a":` + strings.Repeat(`[`, 100000) + strings.Repeat(`]`, 100000) + `}`,
	`{"agents": {"defaults": {"model": "` + strings.Repeat("m", 11<<20) + `"}}}`,
	"{\"agents\": {}}\x00",
}

func TestBadInputConfig(t *testing.T) {
	for i, content := range badConfigs {
		path := writeConfig(t, content)
		_, _, err := LoadWithEnv(path, nil)
		if assert.Error(t, err, "case %d (%.60q) loaded", i, content) {
			assert.Contains(t, err.Error(), path, "case %d: the error names the file", i)
			assert.Less(t, len(err.Error()), 2000, "case %d: the error is short", i)
		}
		after, rerr := os.ReadFile(path)
		require.NoError(t, rerr)
		assert.Equal(t, content, string(after), "case %d: the file was changed", i)
	}
}
