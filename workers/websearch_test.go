package workers

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/config"
)

// TestWebSearchWarningSaysWhenDuckDuckGoStandsIn: the warning the gateway
// logs at start (and `nanobot status` prints) for a provider without its key.
func TestWebSearchWarningSaysWhenDuckDuckGoStandsIn(t *testing.T) {
	t.Setenv("TAVILY_API_KEY", "")
	cfg := config.Default()
	require.Empty(t, WebSearchWarning(cfg), "DuckDuckGo, nanobot's default, needs no key")
	cfg.Tools.Web.Search.Provider = "tavily"
	require.Equal(t, `tools.web.search.provider "tavily" needs tools.web.search.apiKey or TAVILY_API_KEY: web_search falls back to DuckDuckGo`, WebSearchWarning(cfg))
	t.Setenv("TAVILY_API_KEY", "tvly-from-env")
	require.Empty(t, WebSearchWarning(cfg), "the environment's key counts")
	cfg.Tools.Web.Search.Provider, cfg.Tools.Web.Enable = "kagi", false
	require.Empty(t, WebSearchWarning(cfg), "web tools off: nothing to say")
}
