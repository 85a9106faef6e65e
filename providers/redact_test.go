package providers

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRedact(t *testing.T) {
	for _, s := range []string{
		"Incorrect API key provided: sk-LEAKCHECK-0123456789abcdef.", "key sk-proj-abcdefghijklmnopqrstuvwx", "token xoxb-1234567890-abcdefghijkl",
		"bot 123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0", "Authorization: Bearer abcdefghijklmnop", "gsk_abcdefghijklmnopqrstu",
		"AIzaSyA-abcdefghijklmnopqrstuvwxyz", "ghp_abcdefghijklmnopqrstuvwxyz0123",
	} {
		out := Redact(s)
		require.Contains(t, out, "[redacted]", s)
		require.NotContains(t, out, "abcdefghijkl", s)
	}
	for _, s := range []string{"Rate limit reached for gpt-4o", "skipping the task", "Error: 401 (invalid_api_key)", "sk-short"} {
		require.Equal(t, s, Redact(s))
	}
}
