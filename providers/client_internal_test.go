package providers

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestStreamWallIsNanobotsLimit(t *testing.T) {
	require.Zero(t, streamWall(0), "no Timeout, no wall limit")
	require.Equal(t, 300*time.Second, streamWall(60*time.Second))
	require.Equal(t, 600*time.Second, streamWall(300*time.Second))
}

func TestRequiresMaxCompletionTokens(t *testing.T) {
	for model, want := range map[string]bool{
		"gpt-4o": false, "gpt-5": true, "openai/gpt-5.1-mini": true, "o1": true, "o3-mini": true,
		"o4-mini-high": true, "o1x": false, "kimi-k3": true, "moonshot/kimi-k2.5": false, "qwen3": false,
	} {
		require.Equal(t, want, requiresMaxCompletionTokens(model), model)
	}
}
