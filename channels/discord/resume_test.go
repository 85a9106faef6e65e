package discord

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels/discord/discordpeer"
)

// A close with 4000 ("unknown error", resumable) and op 7 (reconnect) make
// the bot RESUME its session: what was dispatched while it was away is
// replayed and published once, and it keeps receiving after.
func TestResumeKeepsTheChannelReceiving(t *testing.T) {
	h := startHarness(t, nil)
	h.sync()
	require.Eventually(t, func() bool { return h.peer.Stats().Heartbeats >= 1 }, 10*time.Second, 10*time.Millisecond, "heartbeats are sent")

	h.peer.CloseGateway(4000)
	missed := h.peer.Say(discordpeer.Incoming{ChannelID: dm, Author: alice, Content: "while you were away"})
	got := h.WaitPublished(2)
	require.Equal(t, "discord:"+missed, got[1].ID, "the dispatch missed while disconnected is replayed on RESUME")
	after := h.sync()
	require.Equal(t, "sync", after.Content, "a message after the resume is published")
	st := h.peer.Stats()
	require.Equal(t, 1, st.Identifies, "resumed, not identified again")
	require.Equal(t, 1, st.Resumes)
	require.Equal(t, 1, st.ResumeURLConnections, "the session resumes at READY's resume_gateway_url")
	require.Zero(t, st.InvalidSessions)

	h.peer.Reconnect()
	require.Eventually(t, func() bool { return h.peer.Stats().Resumes == 2 }, 15*time.Second, 10*time.Millisecond, "op 7 makes it resume")
	h.sync()
	require.Len(t, h.Published(), 4, "nothing was taken twice")
	require.Equal(t, 1, h.peer.Stats().Identifies)
}

// A session the gateway does not know any more (INVALID_SESSION) is
// identified anew, and the channel goes on.
func TestInvalidSessionIdentifiesAnew(t *testing.T) {
	h := startHarness(t, nil)
	h.sync()
	h.peer.ForgetSession()
	h.peer.CloseGateway(4000)
	require.Eventually(t, func() bool { return h.peer.Stats().Identifies == 2 }, 15*time.Second, 10*time.Millisecond)
	require.Equal(t, 1, h.peer.Stats().InvalidSessions)
	h.sync()
}

// A heartbeat left unacknowledged is a dead link: the bot reconnects and
// resumes, and what came meanwhile is taken once.
func TestUnacknowledgedHeartbeatResumes(t *testing.T) {
	peer := discordpeer.New(t)
	peer.DM(dm)
	peer.SetHeartbeat(100 * time.Millisecond)
	h := startOn(t, peer, nil)
	h.sync()
	h.peer.StopACKs(true)
	require.Eventually(t, func() bool { return h.peer.Stats().Connections >= 2 }, 10*time.Second, 10*time.Millisecond)
	h.peer.StopACKs(false)
	require.Eventually(t, func() bool { return h.peer.Stats().Resumes >= 1 }, 10*time.Second, 10*time.Millisecond)
	h.sync()
	require.Len(t, h.Published(), 2)
	require.Equal(t, 1, h.peer.Stats().Identifies)
	require.Contains(t, h.Logs.String(), "discord gateway heartbeat not acknowledged")
}

// A close code no new attempt mends (4014: disallowed intents) stops the
// channel with what to fix, said once, and the gateway is not hammered.
func TestRefusedBotIsNotHammered(t *testing.T) {
	h := startHarness(t, nil)
	h.peer.CloseGateway(4014)
	h.RequireStoppedOnce("discord gateway refused the bot: disallowed intents: enable the Message Content intent",
		func() int { return h.peer.Stats().Connections })
}
