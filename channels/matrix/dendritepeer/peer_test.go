package dendritepeer

import (
	"database/sql"
	"path/filepath"
	"testing"
	"time"

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
	// Dendrite's read side trails its room server: the accepted edit shows a moment later.
	var events, mine []Event
	require.Eventually(t, func() bool {
		events = bob.Messages(t, room)
		mine = From(events, alice)
		return len(mine) == 1 && ShownBody(events, mine[0]) == "hello there"
	}, 30*time.Second, 20*time.Millisecond, "bob never saw the edit; last read: %v", mine)
	mxc := alice.Upload(t, []byte("file body"), "text/plain", "a.txt")
	require.Equal(t, "file body", string(bob.Download(t, mxc)))

	// Dendrite keeps the WAL mode its files were made in (a rollback journal stalls sync behind writes).
	for _, name := range databases {
		db, err := sql.Open("sqlite", "file:"+filepath.Join(h.dir, name+".db"))
		require.NoError(t, err)
		var mode string
		require.NoError(t, db.QueryRow("PRAGMA journal_mode").Scan(&mode))
		db.Close()
		require.Equal(t, "wal", mode, name)
	}
}
