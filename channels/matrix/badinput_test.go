package matrix

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
)

// TestBadEventsFromDendrite: malformed events a user can really send
// through a homeserver (wrong types, missing fields, a huge body, unknown
// event types, an encrypted room's events) are logged with their event id
// and dropped; the message after them is answered: the loop goes on.
func TestBadEventsFromDendrite(t *testing.T) {
	h := startHarness(t, nil)
	room := h.dm(h.alice)
	cases := []struct {
		name, evType, content, log string
	}{
		{"body of the wrong type", "m.room.message", `{"msgtype":"m.text","body":42}`, "matrix message dropped"},
		{"msgtype of the wrong type", "m.room.message", `{"msgtype":["m.text"],"body":"hi"}`, "matrix message dropped"},
		{"no body", "m.room.message", `{"msgtype":"m.text"}`, "matrix message dropped"},
		{"no msgtype", "m.room.message", `{"body":"hi"}`, "matrix message dropped"},
		{"mentions of the wrong type", "m.room.message", `{"msgtype":"m.text","body":"hi","m.mentions":"everyone"}`, "matrix message dropped"},
		{"relation of the wrong type", "m.room.message", `{"msgtype":"m.text","body":"hi","m.relates_to":[1]}`, "matrix message dropped"},
		{"image without url", "m.room.message", `{"msgtype":"m.image","body":"cat.png"}`, "matrix message dropped"},
		{"image with an http url", "m.room.message", `{"msgtype":"m.image","body":"cat.png","url":"http://127.0.0.1/cat.png"}`, "matrix message dropped"},
		{"huge body", "m.room.message", `{"msgtype":"m.text","body":"` + strings.Repeat("a", 40_000) + `"}`, "over the 30000-rune limit"},
		{"unknown event type", "com.example.weird", `{"anything":[1,2,3]}`, "of a type not answered"},
		{"unknown msgtype", "m.room.message", `{"msgtype":"com.example.poll","body":"vote"}`, "matrix message not answered"},
		{"a notice", "m.room.message", `{"msgtype":"m.notice","body":"from another bot"}`, "matrix message not answered"},
		{"an edit", "m.room.message", `{"msgtype":"m.text","body":"* hi","m.new_content":{"msgtype":"m.text","body":"hi"},"m.relates_to":{"rel_type":"m.replace","event_id":"$x"}}`, "matrix message not answered"},
		{"encrypted", "m.room.encrypted", `{"algorithm":"m.megolm.v1.aes-sha2","ciphertext":"AwgA","sender_key":"k","session_id":"s","device_id":"D"}`, encryptedBadLog},
	}
	ids := map[string]string{}
	for _, tc := range cases {
		ids[tc.name] = h.alice.Send(t, room, tc.evType, json.RawMessage(tc.content))
	}
	good := h.alice.SendText(t, room, "still there?")
	got := h.waitInbound(1)
	require.Equal(t, good, got[0].Route.ReplyTo)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { h.waitLog(tc.log, "event_id="+ids[tc.name]) })
	}
	require.Len(t, h.bus.Admitted(), 1, "no bad event reached the agent")
}

// TestBadEventsNoHomeserverSends: what only a broken or hostile
// homeserver could send (invalid UTF-8, an envelope of the wrong shape)
// is dropped by onEvent with its id logged, before any call is made.
func TestBadEventsNoHomeserverSends(t *testing.T) {
	logs := &testenv.SyncBuffer{}
	c := &Channel{warned: channels.NewRecentKeys(16), me: "@bot:localhost"}
	c.Init(Name, slog.New(slog.NewTextHandler(logs, nil)), channels.NewRecentKeys(16))
	c.Attach(func(context.Context, protocol.Inbound, channels.Admitted) error {
		t.Fatal("a bad event reached the manager")
		return nil
	})
	cases := []struct {
		name, raw, id string
	}{
		{"invalid UTF-8", "{\"event_id\":\"$utf\",\"type\":\"m.room.message\",\"sender\":\"@a:x\",\"content\":{\"msgtype\":\"m.text\",\"body\":\"\xff\xfe\"}}", "$utf"},
		{"sender of the wrong type", `{"event_id":"$sender","type":"m.room.message","sender":5,"content":{}}`, "$sender"},
		{"no event id", `{"type":"m.room.message","sender":"@a:x","content":{"msgtype":"m.text","body":"hi"}}`, "(none)"},
		{"event id of the wrong type", `{"event_id":7,"type":"m.room.message","sender":"@a:x","content":{}}`, "7"},
		{"content not an object", `{"event_id":"$content","type":"m.room.message","sender":"@a:x","content":"hi"}`, "$content"},
		{"not an object", `[1,2]`, "(none)"},
		{"timestamp of the wrong type", `{"event_id":"$ts","type":"m.room.message","sender":"@a:x","origin_server_ts":"now","content":{}}`, "$ts"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.NoError(t, c.onEvent(context.Background(), "!room:x", json.RawMessage(tc.raw)))
			require.Contains(t, logs.String(), "event_id="+tc.id)
		})
	}
}
