package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// statusOf runs `nanobot status` on a config file, with no Temporal around.
func statusOf(t *testing.T, cfgPath string) string {
	t.Helper()
	t.Setenv("HOME", t.TempDir())
	t.Setenv("TEMPORAL_ADDRESS", "127.0.0.1:1")
	t.Setenv("TZ", "UTC")
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run([]string{"--config", cfgPath, "status"}, nil, &out, &errOut), errOut.String())
	return out.String()
}

func TestStatusListsNoUnsupportedKeyForNanobotsOnboardConfig(t *testing.T) {
	out := statusOf(t, "../../config/testdata/nanobot-onboard.json")
	require.Contains(t, out, "Unsupported: none of the keys set\n")
	require.NotContains(t, out, "Web search:", "DuckDuckGo needs no key: nothing to say")
}

func TestStatusListsTheUnsupportedKeysSet(t *testing.T) {
	out := statusOf(t, "../../config/testdata/nanobot-every-key.json")
	require.Contains(t, out, "Unsupported: 47 keys set have no effect in this build\n")
	require.Contains(t, out, "\n  channels.telegram.webhookUrl: Telegram runs in polling mode only\n")
	require.Contains(t, out, "\n  tools.exec.sandbox: exec runs without a sandbox in this build\n")
	require.Contains(t, out, `Web search: tools.web.search.baseUrl is read for searxng only; it has no effect with "brave"`)
	require.Equal(t, 47, strings.Count(out, "\n  "), out)
}
