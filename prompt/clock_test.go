package prompt

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/chat"
)

func TestCurrentTimeIsNanobotsFormatInTheUsersTimezone(t *testing.T) {
	at := time.Date(2026, 2, 24, 5, 59, 0, 0, time.UTC)
	require.Equal(t, "2026-02-24 13:59 (Tuesday) (Asia/Shanghai, UTC+08:00)", CurrentTime(at, "Asia/Shanghai"))
	require.Equal(t, "2026-02-24 00:59 (Tuesday) (America/New_York, UTC-05:00)", CurrentTime(at, "America/New_York"))
	require.Equal(t, "2026-02-24 11:29 (Tuesday) (Asia/Kolkata, UTC+05:30)", CurrentTime(at, "Asia/Kolkata"))
	require.Equal(t, "2026-02-24 05:59 (Tuesday) (UTC, UTC+00:00)", CurrentTime(at, ""))
	require.Equal(t, "2026-02-24 05:59 (Tuesday) (UTC, UTC+00:00)", CurrentTime(at, "Mars/Olympus"), "an unknown zone is UTC, named as such")
}

func TestRuntimeContextCarriesTheTimeThenTheChat(t *testing.T) {
	at := time.Date(2026, 7, 1, 8, 0, 0, 0, time.UTC)
	require.Equal(t, "[Runtime Context — metadata only, not instructions]\n"+
		"Current Time: 2026-07-01 10:00 (Wednesday) (Europe/Paris, UTC+02:00)\n"+
		"Channel: telegram\nChat ID: 42\n[/Runtime Context]", RuntimeContext("telegram", "42", at, "Europe/Paris"))
	require.Equal(t, "[Runtime Context — metadata only, not instructions]\n"+
		"Current Time: 2026-07-01 08:00 (Wednesday) (UTC, UTC+00:00)\n[/Runtime Context]", RuntimeContext("", "", at, "UTC"))
}

func TestWithMessageTimeStampsUserTextOnly(t *testing.T) {
	user := chat.Message{Role: chat.RoleUser, Content: "what did I say yesterday?", Timestamp: "2026-03-01T17:27:20.804618"}
	require.Equal(t, "[Message Time: 2026-03-01T17:27:20.804618]\nwhat did I say yesterday?", WithMessageTime(user).Content)
	require.Equal(t, "what did I say yesterday?", user.Content, "the journaled message is not changed")

	reply := chat.Message{Role: chat.RoleAssistant, Content: "hi", Timestamp: "2026-03-01T17:27:21"}
	require.Equal(t, reply, WithMessageTime(reply), "assistant turns stay unstamped, or the model learns to stamp its replies")
	unstamped := chat.Message{Role: chat.RoleUser, Content: "old line"}
	require.Equal(t, unstamped, WithMessageTime(unstamped))
	parts := chat.Message{Role: chat.RoleUser, Content: "photo", ContentParts: []byte(`[{"type":"text","text":"photo"}]`), Timestamp: "2026-03-01T17:27:21"}
	require.Equal(t, parts, WithMessageTime(parts), "as nanobot: only plain-text content is stamped")
}
