package matrix

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/internal/pgtest"
	"github.com/nanobot-durable/nanobot/pgstore"
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
	require.Equal(t, 1, countLines(h.env.Logs.String(), "matrix logged in with the password"), "the restart reused the session")
}

// TestReplayedBatchIsDeduplicated: a crash between handing a message over
// and saving the sync token replays the batch; the event ids already
// handed over (kept under the nanobot home) are not handed over again.
func TestReplayedBatchIsDeduplicated(t *testing.T) {
	h := startHarness(t, nil)
	room := h.dm(h.alice)
	before := h.syncToken()
	h.alice.SendText(t, room, "one")
	h.waitInbound(1)
	h.stop()
	require.NoError(t, h.ch.cursor.State.Put(h.ch.cursor.Key, before)) // the token as it was before "one"
	h.start()
	h.alice.SendText(t, room, "two")
	got := h.waitInbound(2)
	require.Equal(t, []string{"one", "two"}, contents(got))
}

// TestAFreshHomeResumesFromTheDatabase: on PostgreSQL the sync token is the
// database's, so a gateway started with an empty home (another host, a
// replaced disk) goes on where the last one stopped: what came while no
// gateway ran is answered, and nothing handed over before comes again,
// though the new home has no seen set of its own.
func TestAFreshHomeResumesFromTheDatabase(t *testing.T) {
	db, err := pgstore.Open(context.Background(), pgtest.Database(t), nil)
	require.NoError(t, err)
	t.Cleanup(db.Close)
	h := newHarness(t, nil)
	h.env.State = func(channel string) channels.StateStore { return db.ChannelState("default", channel) }
	h.start()
	room := h.dm(h.alice)
	h.alice.SendText(t, room, "one")
	h.waitInbound(1)
	firstHome := h.ch.stateDir

	h.stop()
	h.alice.SendText(t, room, "while down")
	h.env.Config.Path = filepath.Join(t.TempDir(), "config.json") // a fresh home, the same database
	h.start()
	require.NotEqual(t, firstHome, h.ch.stateDir)
	h.alice.SendText(t, room, "after")
	got := h.waitInbound(3)
	require.Equal(t, []string{"one", "while down", "after"}, contents(got), "none missed, none twice")
	for _, home := range []string{firstHome, h.ch.stateDir} {
		_, err := os.Stat(filepath.Join(home, stateFile))
		require.ErrorIs(t, err, os.ErrNotExist, "the token is kept in the database, not under %s", home)
	}
}

// TestTheTokenOfAnEarlierBuildIsRead: a home whose token is still in
// matrix-sync.json (before the state store) resumes from it.
func TestTheTokenOfAnEarlierBuildIsRead(t *testing.T) {
	h := startHarness(t, nil)
	room := h.dm(h.alice)
	h.alice.SendText(t, room, "one")
	h.waitInbound(1)
	h.stop()
	old, err := json.Marshal(syncState{UserID: h.bot.ID, NextBatch: h.syncToken()})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(h.ch.statePath(syncFile), old, 0o600))
	require.NoError(t, os.Remove(h.ch.statePath(stateFile)))
	h.alice.SendText(t, room, "while down")
	h.start()
	h.alice.SendText(t, room, "after")
	require.Equal(t, []string{"one", "while down", "after"}, contents(h.waitInbound(3)))
}

// TestRestartWithNothingNewConnectsAtOnce: a restart whose token has nothing
// new after it is connected after one sync that does not wait, not after a
// 30 s long poll (a fresh clone's run saw "never connected" in 10 s).
func TestRestartWithNothingNewConnectsAtOnce(t *testing.T) {
	h := startHarness(t, nil)
	for i := 0; i < 2; i++ { // the first restart may find the keys the first start uploaded; the second finds nothing
		h.stop()
		h.start()
	}
}
