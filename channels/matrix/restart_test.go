package matrix

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRestartResumesFromTheSavedToken: the first start skips the backlog
// (before the invite and after it);
// a restart answers what came while the channel was down, and not what
// it had already handed over.
func TestRestartResumesFromTheSavedToken(t *testing.T) {
	h := newHarness(t, nil)
	room := h.alice.CreateRoom(t, true)
	h.alice.SendText(t, room, "before the bot ever ran")
	h.alice.Invite(t, room, h.bot)
	h.alice.SendText(t, room, "invited, but the bot never ran")
	h.start()
	require.Eventually(t, func() bool { return h.alice.Joined(t, room, h.bot) }, defaultWait, pollEvery,
		"an invite pending at the first start is joined")
	h.alice.SendText(t, room, "one")
	require.Equal(t, "one", h.waitInbound(1)[0].Content, "the backlog before the first start is not answered")

	h.stop()
	h.alice.SendText(t, room, "while down")
	h.start()
	got := h.waitInbound(2)
	require.Equal(t, "while down", got[1].Content)
	h.alice.SendText(t, room, "after")
	got = h.waitInbound(3)
	require.Equal(t, []string{"one", "while down", "after"}, contents(got), "nothing handed over twice")
}

// TestPasswordLoginKeepsItsSession: with a password (nanobot's other
// login) the channel logs in, saves the session, and a restart reuses
// that device instead of logging in again.
func TestPasswordLoginKeepsItsSession(t *testing.T) {
	h := newHarness(t, map[string]any{"accessToken": nil, "deviceId": nil, "password": "password-nanobot"})
	h.start()
	room := h.dm(h.alice)
	h.alice.SendText(t, room, "hi")
	h.waitInbound(1)
	data, err := os.ReadFile(h.ch.statePath(sessionFile))
	require.NoError(t, err)
	var s session
	require.NoError(t, json.Unmarshal(data, &s))
	require.Equal(t, h.bot.ID, s.UserID)
	require.NotEqual(t, h.bot.DeviceID, s.DeviceID, "a device of its own")
	info, err := os.Stat(h.ch.statePath(sessionFile))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())

	h.stop()
	h.start()
	h.waitLog("matrix connected", "device="+s.DeviceID)
	require.Equal(t, 1, countLines(h.logs.String(), "matrix logged in with the password"), "the restart reused the session")
}

// TestReplayedBatchIsDeduplicated: a crash between handing a message over
// and saving the sync token replays the batch; the event ids already
// handed over (kept under the nanobot home) are not handed over again.
func TestReplayedBatchIsDeduplicated(t *testing.T) {
	h := startHarness(t, nil)
	room := h.dm(h.alice)
	before, err := os.ReadFile(h.ch.statePath(syncFile))
	require.NoError(t, err)
	h.alice.SendText(t, room, "one")
	h.waitInbound(1)
	h.stop()
	require.NoError(t, os.WriteFile(h.ch.statePath(syncFile), before, 0o600)) // the token as it was before "one"
	h.start()
	h.alice.SendText(t, room, "two")
	got := h.waitInbound(2)
	require.Equal(t, []string{"one", "two"}, contents(got))
}
