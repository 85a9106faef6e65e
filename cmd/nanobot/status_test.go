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
}

func TestStatusListsTheUnsupportedKeysSet(t *testing.T) {
	out, logged := statusOf(t, "../../config/testdata/nanobot-every-key.json")
	require.Contains(t, logged, "config: config ../../config/testdata/nanobot-every-key.json: tools.imageGeneration.enabled: has no effect in this build")
	require.Contains(t, out, "Unsupported: 48 keys set have no effect in this build\n")
	for _, done := range []string{"tools.my.", "tools.maxSessionMessagesPerMinute", "gateway.restartMode"} {
		require.NotContains(t, out, "\n  "+done, "issue 36 made it work")
	}
	require.Contains(t, out, "\n  channels.telegram.webhookUrl: Telegram runs in polling mode only\n")
	require.Contains(t, out, "\n  tools.imageGeneration.enabled: there is no image generation in this build\n")
	require.Contains(t, out, `Web search: tools.web.search.baseUrl is read for searxng only; it has no effect with "brave"`)
	unsupported, _, _ := strings.Cut(out, "\nSecurity:\n")
	require.Equal(t, 48, strings.Count(unsupported, "\n  "), out)
}

func TestStatusSaysWhichOAuthMCPServersNeedALogin(t *testing.T) {
	cfgPath := filepath.Join(t.TempDir(), "config.json")
	require.NoError(t, os.WriteFile(cfgPath, []byte(`{"tools":{"mcpServers":{"remote":{"url":"http://127.0.0.1:1/mcp","auth":"oauth"},"local":{"command":"x"}}}}`), 0o600))
	out, _ := statusOf(t, cfgPath)
	require.Contains(t, out, "MCP OAuth: remote (not logged in: run nanobot mcp login remote)\n")
}
