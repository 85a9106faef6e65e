package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// statusOf runs `nanobot status` on a config file, with no Temporal around;
// it returns what was printed and what was logged.
func statusOf(t *testing.T, cfgPath string) (string, string) {
	t.Helper()
	t.Setenv("HOME", t.TempDir())
	t.Setenv("TEMPORAL_ADDRESS", "127.0.0.1:1")
	t.Setenv("TZ", "UTC")
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run([]string{"--config", cfgPath, "status"}, nil, &out, &errOut), errOut.String())
	return out.String(), errOut.String()
}

func TestStatusListsNoUnsupportedKeyForNanobotsOnboardConfig(t *testing.T) {
	// The fixture holds nanobot's schema defaults and its channels' default blocks.
	out, logged := statusOf(t, "../../config/testdata/nanobot-onboard.json")
	require.Contains(t, out, "Unsupported: none of the keys set\n")
	require.NotContains(t, logged, "config:", "no warning about any key, the channel blocks' included")
	require.NotContains(t, out, "Web search:", "DuckDuckGo needs no key: nothing to say")
	require.Contains(t, out, "\nCLI apps:  run_cli_app on, none installed (nanobot cli-apps)\n", "nanobot's default has the tool on")
	require.NotContains(t, out, "\nImages:", "image generation is off by default")
}

func TestStatusListsTheUnsupportedKeysSet(t *testing.T) {
	out, logged := statusOf(t, "../../config/testdata/nanobot-every-key.json")
	require.NotContains(t, logged, "tools.cliApps")
	require.Contains(t, out, "Unsupported: 37 keys set have no effect in this build\n")
	for _, done := range []string{"tools.my.", "tools.maxSessionMessagesPerMinute", "gateway.restartMode", "tools.imageGeneration.", "tools.cliApps."} {
		require.NotContains(t, out, "\n  "+done, "issue 36 made it work")
	}
	require.Contains(t, out, "\n  channels.telegram.webhookUrl: Telegram runs in polling mode only\n")
	require.NotContains(t, out, "\nCLI apps:", "cliApps.enable false: nothing more to say")
	require.Contains(t, out, `Web search: tools.web.search.baseUrl is read for searxng only; it has no effect with "brave"`)
	unsupported, _, _ := strings.Cut(out, "\nSecurity:\n")
	require.Equal(t, 37, strings.Count(unsupported, "\n  "), out)
}

func TestStatusNamesAnImageProviderThisBuildLacks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"tools": {"imageGeneration": {"enabled": true, "provider": "openai_codex"}, "cliApps": {"enable": false}}}`), 0o600))
	out, _ := statusOf(t, path)
	require.Contains(t, out, "\nImages:    tools.imageGeneration.provider: image generation provider 'openai_codex' needs nanobot's Codex OAuth login (ChatGPT subscription), which this build does not have; use openai with an API key\n")
	require.NotContains(t, out, "\nCLI apps:")
}

func TestStatusSaysWhichOAuthMCPServersNeedALogin(t *testing.T) {
	cfgPath := filepath.Join(t.TempDir(), "config.json")
	require.NoError(t, os.WriteFile(cfgPath, []byte(`{"tools":{"mcpServers":{"remote":{"url":"http://127.0.0.1:1/mcp","auth":"oauth"},"local":{"command":"x"}}}}`), 0o600))
	out, _ := statusOf(t, cfgPath)
	require.Contains(t, out, "MCP OAuth: remote (not logged in: run nanobot mcp login remote)\n")
}
