package secrets

import (
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFindsSecretsByNameAndMasksThem(t *testing.T) {
	cfg := map[string]any{
		"providers": map[string]any{"openai": map[string]any{"apiKey": "sk-abcdefgh1234", "apiBase": "http://127.0.0.1/v1"}},
		"channels":  map[string]any{"telegram": map[string]any{"token": "123456:TELEGRAMTOKEN", "allowFrom": []any{"12345678"}}},
		"tools":     map[string]any{"mcpServers": map[string]any{"x": map[string]any{"headers": map[string]any{"Authorization": "Bearer mcp-secret-value"}}}},
		"short":     map[string]any{"apiKey": "none"},
	}
	s := FromConfig(cfg, []string{"OPENAI_API_KEY=sk-from-env-9999", "HOME=/home/someone-long"})
	require.Equal(t, 5, s.Len())
	got := s.Redact("key sk-abcdefgh1234, token 123456:TELEGRAMTOKEN, Bearer mcp-secret-value, mcp-secret-value, env sk-from-env-9999, base http://127.0.0.1/v1, none, 12345678")
	require.Equal(t, "key [redacted], token [redacted], [redacted], [redacted], env [redacted], base http://127.0.0.1/v1, none, 12345678", got)
	var nilSet *Set
	require.Equal(t, "x", nilSet.Redact("x"))
}

func TestLogHandlerMasksMessagesAndAttributes(t *testing.T) {
	var buf strings.Builder
	set := FromConfig(map[string]any{"apiKey": "sk-log-secret-1"}, nil)
	log := slog.New(Handler(slog.NewJSONHandler(&buf, nil), set)).With("base", "key sk-log-secret-1")
	log.Info("calling with sk-log-secret-1", "error", errors.New("401: bad key sk-log-secret-1"), "n", 3)
	require.NotContains(t, buf.String(), "sk-log-secret-1")
	require.Contains(t, buf.String(), `"n":3`)
	require.Equal(t, 3, strings.Count(buf.String(), Mask))
}

// A token fetched at run time (a tenant access token) is masked from then
// on, in a logger made before it was known.
func TestAddedSecretIsMaskedByALoggerMadeBefore(t *testing.T) {
	var buf strings.Builder
	set := FromConfig(map[string]any{}, nil)
	log := slog.New(Handler(slog.NewTextHandler(&buf, nil), set))
	set.Add("t-runtime-token-42", "short")
	log.Info("refreshed", "token", "t-runtime-token-42", "word", "short")
	require.NotContains(t, buf.String(), "t-runtime-token-42")
	require.Contains(t, buf.String(), "word=short")
	require.Equal(t, 1, set.Len())
}

func TestRegisteredSecretIsMaskedByEverySet(t *testing.T) {
	var buf strings.Builder
	early := FromConfig(map[string]any{}, nil)
	log := slog.New(Handler(slog.NewTextHandler(&buf, nil), nil))
	Register("0f1e2d3c4b5a69788796a5b4c3d2e1f0")
	log.Info("key", "value", "0f1e2d3c4b5a69788796a5b4c3d2e1f0")
	require.NotContains(t, buf.String(), "0f1e2d3c4b5a69788796a5b4c3d2e1f0", "a logger without a set masks it")
	require.Equal(t, "k="+Mask, early.Redact("k=0f1e2d3c4b5a69788796a5b4c3d2e1f0"), "a set made before it was registered")
	require.Equal(t, "k="+Mask, (*Set)(nil).Redact("k=0f1e2d3c4b5a69788796a5b4c3d2e1f0"))
}
