package qq

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels/qq/qqpeer"
	"github.com/nanobot-durable/nanobot/secrets"
)

// IDENTIFY carries "QQBot <token>", nanobot's intents (C2C and group
// @-messages, guild DMs) and shard [0, 1]; READY names the bot.
func TestIdentify(t *testing.T) {
	h := startHarness(t, nil)
	intents, shard := h.peer.Intents()
	require.Equal(t, 1<<25|1<<12, intents, "GROUP_AND_C2C_EVENT and DIRECT_MESSAGE")
	require.NotZero(t, intents&(1<<25))
	require.Equal(t, []int{0, 1}, shard)
	require.Equal(t, 1, h.peer.Stats().Identifies)
	require.Equal(t, 1, h.peer.Stats().TokensIssued)
	require.Contains(t, h.Ch.Describe(), qqpeer.BotName)
	require.Equal(t, secrets.Mask, h.mask.Redact("peer-access-token-1"), "the fetched token joins the log mask")
	for _, c := range h.peer.Calls() {
		require.Equal(t, "QQBot peer-access-token-1", c.Auth, "REST calls carry the access token")
	}
}

// Heartbeats go out at HELLO's interval with the last dispatch's seq (null
// before any), and are acknowledged.
func TestHeartbeatCarriesTheLastSeq(t *testing.T) {
	peer := qqpeer.New(t)
	peer.SetHeartbeat(100 * time.Millisecond)
	h := startOn(t, peer, nil)
	h.sync()
	require.Eventually(t, func() bool { return len(h.peer.Stats().HeartbeatSeqs) >= 3 }, 10*time.Second, 10*time.Millisecond)
	seqs := h.peer.Stats().HeartbeatSeqs
	require.Equal(t, int64(2), seqs[len(seqs)-1], "READY was seq 1, the sync message seq 2")
	require.Equal(t, 1, h.peer.Stats().Connections, "acknowledged heartbeats keep the connection")
}

// A heartbeat left unacknowledged is a dead link: the bot reconnects and resumes.
func TestUnacknowledgedHeartbeatReconnects(t *testing.T) {
	peer := qqpeer.New(t)
	peer.SetHeartbeat(100 * time.Millisecond)
	h := startOn(t, peer, nil)
	h.peer.StopACKs(true)
	require.Eventually(t, func() bool { return h.peer.Stats().Connections >= 2 }, 10*time.Second, 10*time.Millisecond)
	h.peer.StopACKs(false)
	require.Eventually(t, func() bool { return h.peer.Stats().Resumes >= 1 }, 10*time.Second, 10*time.Millisecond)
	h.sync()
}

// A drop makes the bot RESUME its session: what was dispatched while it
// was away is replayed and published once; op 7 does the same.
func TestResumeAfterADrop(t *testing.T) {
	h := startHarness(t, nil)
	h.sync()
	h.peer.CloseGateway(4009)
	missed := h.peer.C2C(alice, "while you were away")
	got := h.WaitPublished(2)
	require.Equal(t, "qq:"+missed, got[1].ID, "the dispatch missed while disconnected is replayed on RESUME")
	require.Equal(t, "sync", h.sync().Content, "a message after the resume is published")
	st := h.peer.Stats()
	require.Equal(t, 1, st.Identifies, "resumed, not identified again")
	require.Equal(t, 1, st.Resumes)
	require.Eventually(t, h.Ch.Connected, 10*time.Second, 10*time.Millisecond)

	h.peer.Reconnect()
	require.Eventually(t, func() bool { return h.peer.Stats().Resumes == 2 }, 15*time.Second, 10*time.Millisecond, "op 7 makes it resume")
	h.sync()
	require.Len(t, h.Published(), 4, "nothing was taken twice")
	require.Equal(t, 1, h.peer.Stats().Identifies)
}

// A session the gateway does not know any more (op 9) is identified anew.
func TestInvalidSessionIdentifiesAnew(t *testing.T) {
	h := startHarness(t, nil)
	h.sync()
	h.peer.ForgetSession()
	h.peer.CloseGateway(4009)
	require.Eventually(t, func() bool { return h.peer.Stats().Identifies == 2 }, 15*time.Second, 10*time.Millisecond)
	require.Equal(t, 1, h.peer.Stats().InvalidSessions)
	h.sync()
}

// Connected follows the session: false while the gateway cannot be
// reached (the bot backs off), true again once it is back.
func TestConnectedFollowsTheGateway(t *testing.T) {
	h := startHarness(t, nil)
	require.True(t, h.Ch.Connected())
	for range 2 {
		h.peer.Fail("GET", "/gateway", 502, `{"code":500,"message":"bad gateway"}`)
	}
	h.peer.CloseGateway(4009)
	require.Eventually(t, func() bool { return !h.Ch.Connected() }, 10*time.Second, 5*time.Millisecond)
	require.Eventually(t, h.Ch.Connected, 15*time.Second, 10*time.Millisecond, "it comes back after its backoff")
	h.sync()
	require.Contains(t, h.Logs.String(), "qq cannot connect; retrying")
}

// A close saying the bot is offline or banned (4914, 4915) is not hammered:
// the bot stops trying until it is restarted, and says why once.
func TestBannedBotIsNotHammered(t *testing.T) {
	h := startHarness(t, nil)
	h.peer.CloseGateway(4914)
	h.RequireStoppedOnce("qq gateway refused the bot", func() int { return h.peer.Stats().Connections })
}
