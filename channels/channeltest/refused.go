package channeltest

import (
	"strings"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
)

// RequireStoppedOnce checks a channel the platform refused for good (a
// banned bot, a bad token): its log says refusal once and that it stopped,
// it is down, and connections (the peer's count) stays at one through the
// usual backoff: it is not hammered.
func (r *Run[C]) RequireStoppedOnce(refusal string, connections func() int) {
	r.T.Helper()
	logs := func() string { return r.Logs.String() }
	require.Eventually(r.T, func() bool { return strings.Contains(logs(), refusal) }, 10*time.Second, 10*time.Millisecond)
	require.Contains(r.T, logs(), r.Ch.Name()+" stopped")
	require.Never(r.T, func() bool { return connections() > 1 }, 1500*time.Millisecond, 50*time.Millisecond,
		"no reconnect within the usual backoff")
	require.False(r.T, any(r.Ch).(channels.Connector).Connected())
	require.Equal(r.T, 1, strings.Count(logs(), refusal), "said once")
}
