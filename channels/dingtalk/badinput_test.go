package dingtalk

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels/dingtalk/dingtalkpeer"
)

// Payloads DingTalk would never send are logged with their id and dropped:
// no crash, no turn, and the stream goes on.
func TestBadPayloadsAreDropped(t *testing.T) {
	h := startHarness(t, nil)
	msg := func(id, extra string) string {
		return fmt.Sprintf(`{"msgId":"%s","msgtype":"text","conversationType":"1","senderStaffId":"staff-alice","text":{"content":"hi"}%s}`, id, extra)
	}
	cases := []struct{ name, data, logged string }{
		{"no msgId", `{"msgtype":"text","conversationType":"1","senderStaffId":"staff-alice","text":{"content":"hi"}}`, `msg_id=? `},
		{"no sender", `{"msgId":"msgBAD02","conversationType":"1","text":{"content":"hi"}}`, "msgBAD02"},
		{"unknown conversation type", msg("msgBAD03", `,"conversationType":"3"`), "msgBAD03"},
		{"group without conversation", msg("msgBAD04", `,"conversationType":"2","isInAtList":true`), "msgBAD04"},
		{"text a number", `{"msgId":"msgBAD05","conversationType":"1","senderStaffId":"s","text":{"content":42}}`, "msgBAD05"},
		{"msgId a number", `{"msgId":12345,"conversationType":"1","senderStaffId":"s"}`, "msg_id=12345"},
		{"richText an object", msg("msgBAD07", `,"msgtype":"richText","content":{"richText":{}}`), "msgBAD07"},
		{"atUsers a string", msg("msgBAD08", `,"atUsers":"all"`), "msgBAD08"},
		{"huge text", fmt.Sprintf(`{"msgId":"msgBAD10","conversationType":"1","senderStaffId":"s","text":{"content":"%s"}}`, strings.Repeat("x", 30000)), "msgBAD10"},
		{"data not JSON", `hello`, ""},
		{"data null", `null`, ""},
		{"empty message", msg("msgBAD13", `,"msgtype":"unknownType","text":{"content":"  "}`), "msgBAD13"},
	}
	for _, tc := range cases {
		h.peer.Push(dingtalkpeer.Callback, dingtalkpeer.TopicRobot, tc.data)
	}
	h.peer.PushRaw([]byte(`{"type":"CALLBACK","headers":{"messageId":"x"`)) // a broken frame
	h.peer.PushRaw([]byte(`{"type":"CALLBACK","data":"{}"}`))               // no messageId to answer
	h.peer.PushRaw([]byte(`{"type":"CALLBACK","headers":{"messageId":"frameUTF8","topic":"/v1.0/im/bot/messages/get"},"data":"{\"msgId\":\"bad ` + "\xff\xfe" + `\"}"}`))
	h.peer.Push("SOMETHING_NEW", "x", "{}")
	h.peer.Push(dingtalkpeer.Callback, "/v1.0/card/instances/callback", "{}")
	h.sync() // handled in order: everything before it was handled too
	require.Len(t, h.Published(), 1, "only the sync message was published")
	logs := h.Logs.String()
	for _, tc := range cases {
		if tc.logged != "" {
			require.Contains(t, logs, tc.logged, tc.name)
		}
	}
	require.Contains(t, logs, `error="bad robot message: text of 30000 characters"`)
	require.Contains(t, logs, `message_id=frameUTF8 error="stream frame not valid UTF-8"`)
	require.Equal(t, len(cases), strings.Count(logs, "dingtalk message dropped"), "each bad message is logged once")
	require.Equal(t, 3, strings.Count(logs, "dingtalk stream frame dropped"))
	require.True(t, h.Ch.Connected(), "the stream is still up")
}
