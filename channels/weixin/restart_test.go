package weixin

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels/weixin/weixinpeer"
)

// TestRestartResumesFromStoredCursor: a restarted channel polls from the
// cursor it stored; what it handled before is not handed over again.
func TestRestartResumesFromStoredCursor(t *testing.T) {
	h := startHarness(t, nil)
	h.peer.Say(weixinpeer.Message{From: alice, Text: "first"})
	h.WaitPublished(1)
	require.Eventually(t, func() bool { a, _ := loadAccount(h.dir); return a.GetUpdatesBuf == "buf-1" }, 5e9, 1e7)
	h.Stop()
	a, err := loadAccount(h.dir)
	require.NoError(t, err)
	require.Equal(t, "ctx-"+alice, a.ContextTokens[alice], "the context token survives a restart")

	polled := len(h.peer.Polls())
	h.peer.Say(weixinpeer.Message{From: alice, Text: "second"})
	again := startOn(t, h.peer, h.dir, nil)
	got := again.WaitPublished(1)
	require.Equal(t, "second", got[0].Content)
	require.Equal(t, "buf-1", h.peer.Polls()[polled].Buf, "the first poll after the restart asks from the stored cursor")
	again.peer.Redeliver(0) // the server replays "first" (a cursor reset on its side)
	again.sync()
	require.Len(t, again.Published(), 2, "first is not handed over again: the handled ids survive the restart")
}

// TestRedeliveredMessageTakenOnce: a message the server sends twice is published once.
func TestRedeliveredMessageTakenOnce(t *testing.T) {
	h := startHarness(t, nil)
	h.peer.Say(weixinpeer.Message{From: alice, Text: "once"})
	h.WaitPublished(1)
	h.peer.Redeliver(0)
	h.sync()
	require.Len(t, h.Published(), 2)
	require.Contains(t, h.Logs.String(), "redelivered")
}

// TestFailedPublishPolledAgain: a message that could not be handed over
// keeps the cursor where it was; the next poll brings it again, once.
func TestFailedPublishPolledAgain(t *testing.T) {
	h := startHarness(t, nil)
	h.Down.Store(true)
	h.peer.Say(weixinpeer.Message{From: alice, Text: "do not lose me"})
	require.Eventually(t, func() bool { return strings.Contains(h.Logs.String(), "could not be handed to the agent") }, 5*time.Second, time.Millisecond)
	h.Down.Store(false)
	got := h.WaitPublished(1)
	require.Equal(t, "do not lose me", got[0].Content)
	h.sync()
	require.Len(t, h.Published(), 2, "taken in once")
}
