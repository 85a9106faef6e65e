package dendritepeer

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPeerTalksToDendrite: two users registered over the client-server
// API share a room, a message and its edit are read back, a file round-trips.
func TestPeerTalksToDendrite(t *testing.T) {
	h := StartDendrite(t)
	alice, bob := h.RegisterUser(t, "alice"), h.RegisterUser(t, "bob")
	require.Equal(t, "@alice:localhost", alice.ID)
	room := alice.CreateRoom(t, true, bob)
	bob.Join(t, room)
	require.True(t, alice.Joined(t, room, bob))
	first := alice.SendText(t, room, "hello")
	alice.Send(t, room, "m.room.message", map[string]any{
		"msgtype": "m.text", "body": "* hello there",
		"m.new_content": map[string]any{"msgtype": "m.text", "body": "hello there"},
		"m.relates_to":  map[string]any{"rel_type": "m.replace", "event_id": first},
	})
	events := bob.Messages(t, room)
	mine := From(events, alice)
	require.Len(t, mine, 1)
	require.Equal(t, "hello there", ShownBody(events, mine[0]))
	mxc := alice.Upload(t, []byte("file body"), "text/plain", "a.txt")
	require.Equal(t, "file body", string(bob.Download(t, mxc)))
}
