package tools

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/protocol"
)

func TestHint(t *testing.T) {
	for _, tc := range []struct{ name, args, want string }{
		{"read_file", `{"path":"README.md","offset":3}`, "read_file README.md"},
		{"exec", `{"command":"ls   -la\n/tmp"}`, "exec ls -la /tmp"},
		{"web_search", `{"count":3,"query":"temporal schedules"}`, "web_search temporal schedules"},
		{"mcp_x_echo", `{"zeta":"z","alpha":"a"}`, "mcp_x_echo a"},
		{"list_dir", `{}`, "list_dir"},
		{"list_dir", `not json`, "list_dir"},
		{"write_file", `{"path":"` + "0123456789012345678901234567890123456789abc" + `"}`, "write_file 0123456789012345678901234567890123456789…"},
		{"message", `{"content":"hi"}`, ""},
	} {
		require.Equal(t, tc.want, Hint(tc.name, tc.args, 40), tc.args)
	}
}

func TestMessageAnswersOrigin(t *testing.T) {
	origin := protocol.Route{Channel: "telegram", ChatID: "42", ReplyTo: "9"}
	require.True(t, MessageAnswersOrigin(origin, `{"content":"x"}`))
	require.True(t, MessageAnswersOrigin(origin, `{"content":"x","chat_id":"42"}`))
	require.False(t, MessageAnswersOrigin(origin, `{"content":"x","chat_id":"43"}`))
	require.False(t, MessageAnswersOrigin(origin, `{"content":"x","channel":"slack","chat_id":"42"}`))
}
