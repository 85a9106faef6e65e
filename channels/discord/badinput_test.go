package discord

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Payloads Discord would never send are logged with the message id and
// dropped: no crash, no turn, and the channel goes on.
func TestBadPayloadsAreDropped(t *testing.T) {
	h := startHarness(t, map[string]any{"groupPolicy": "open"})
	author := `{"id":"800000000000000001","username":"alice"}`
	msg := func(id, extra string) string {
		return fmt.Sprintf(`{"id":"%s","channel_id":"%s","author":%s,"content":"hi","type":0%s}`, id, dm, author, extra)
	}
	cases := []struct {
		name, event, data, logged string
	}{
		{"missing author", "MESSAGE_CREATE", fmt.Sprintf(`{"id":"1400000000000000001","channel_id":"%s","content":"hi"}`, dm), "1400000000000000001"},
		{"null author", "MESSAGE_CREATE", fmt.Sprintf(`{"id":"1400000000000000002","channel_id":"%s","author":null,"content":"hi"}`, dm), "1400000000000000002"},
		{"author without id", "MESSAGE_CREATE", fmt.Sprintf(`{"id":"1400000000000000003","channel_id":"%s","author":{"username":"x"},"content":"hi"}`, dm), "1400000000000000003"},
		{"content a number", "MESSAGE_CREATE", fmt.Sprintf(`{"id":"1400000000000000004","channel_id":"%s","author":%s,"content":42}`, dm, author), "1400000000000000004"},
		{"id a number", "MESSAGE_CREATE", fmt.Sprintf(`{"id":1400000000000000005,"channel_id":"%s","author":%s,"content":"hi"}`, dm, author), "1400000000000000005"},
		{"mentions a string", "MESSAGE_CREATE", msg("1400000000000000006", `,"mentions":"everyone"`), "1400000000000000006"},
		{"attachments an object", "MESSAGE_CREATE", msg("1400000000000000007", `,"attachments":{}`), "1400000000000000007"},
		{"attachment without id", "MESSAGE_CREATE", msg("1400000000000000008", `,"attachments":[{"filename":"x","url":"https://cdn.discordapp.com/x"}]`), "1400000000000000008"},
		{"no channel", "MESSAGE_CREATE", fmt.Sprintf(`{"id":"1400000000000000009","author":%s,"content":"hi"}`, author), "1400000000000000009"},
		{"guild id not an id", "MESSAGE_CREATE", msg("1400000000000000010", `,"guild_id":"the guild"`), "1400000000000000010"},
		{"invalid UTF-8", "MESSAGE_CREATE", fmt.Sprintf(`{"id":"1400000000000000011","channel_id":"%s","author":%s,"content":"bad `, dm, author) + "\xff\xfe" + ` bytes"}`, "1400000000000000011"},
		{"huge content", "MESSAGE_CREATE", fmt.Sprintf(`{"id":"1400000000000000012","channel_id":"%s","author":%s,"content":"%s"}`, dm, author, strings.Repeat("x", 5000)), "1400000000000000012"},
		{"null data", "MESSAGE_CREATE", `null`, "message_id=?"},
		{"data an array", "MESSAGE_CREATE", `[1,2,3]`, "message_id=?"},
		{"data a string", "MESSAGE_CREATE", `"hello"`, "message_id=?"},
		{"unknown event type", "SOMETHING_NEW", msg("1400000000000000013", ""), "type=SOMETHING_NEW"},
		{"broken frame", "MESSAGE_CREATE", `{"id":"1400000000000000014",`, ""},
	}
	for _, tc := range cases {
		h.peer.DispatchRaw(tc.event, []byte(tc.data))
	}
	h.sync() // handled in order: everything before it was handled too
	require.Len(t, h.Published(), 1, "only the sync message was published")
	logs := h.Logs.String()
	for _, tc := range cases {
		if tc.logged != "" {
			require.Contains(t, logs, tc.logged, tc.name)
		}
	}
	require.Contains(t, logs, `message_id=1400000000000000011 error="bad MESSAGE_CREATE payload: not valid UTF-8"`)
	require.Contains(t, logs, `message_id=1400000000000000012 error="bad MESSAGE_CREATE payload: content of 5000 characters`)
	require.Equal(t, strings.Count(logs, "discord message dropped"), 15, "each bad MESSAGE_CREATE is logged once")
}
