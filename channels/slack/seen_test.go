package slack

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/slack/slackpeer"
)

// TestRetryReachingAnotherGatewayIsDropped: two channels on one shared
// dedupe set (two gateways on one database); Slack's retry of an event on
// the other gateway's connection is acknowledged and not taken in again.
func TestRetryReachingAnotherGatewayIsDropped(t *testing.T) {
	shared := channels.NewRecentKeys(64)
	var opened []string
	seen := func(set string, n int) channels.SeenKeys {
		opened = append(opened, set)
		return shared
	}
	first, second := startHarnessWith(t, nil, seen), startHarnessWith(t, nil, seen)
	ev := slackpeer.AppMention("C1", "U1", "1700000000.000100", "", "<@"+peerBot+"> hello")
	first.peer.Push("env-1", "Ev1", 0, ev)
	first.WaitPublished(1)

	second.peer.Push("env-2", "Ev1", 1, ev) // the retry, on the other connection
	second.peer.Push("env-3", "Ev2", 0, slackpeer.AppMention("C1", "U1", "1700000000.000200", "", "<@"+peerBot+"> next"))
	got := second.WaitPublished(1) // one worker takes envelopes in order: env-2 was handled first
	require.Len(t, got, 1, "the retry is not taken in twice")
	require.Equal(t, "next", got[0].Content)
	require.Eventually(t, func() bool { return len(second.peer.Acks()) == 2 }, 10*time.Second, 10*time.Millisecond, "the dropped retry is still acknowledged")
	require.Len(t, first.Published(), 1)
	require.Equal(t, []string{"slack-events", "slack-events"}, opened)
}

// TestWithoutASharedSetEachGatewayKeepsItsOwn: with Deps.Seen nil (the
// files store) a channel still drops its own redeliveries, and another
// channel, with its own set, takes the event in.
func TestWithoutASharedSetEachGatewayKeepsItsOwn(t *testing.T) {
	first, second := startHarness(t, nil), startHarness(t, nil)
	ev := slackpeer.AppMention("C1", "U1", "1700000000.000100", "", "<@"+peerBot+"> hello")
	first.peer.Push("env-1", "Ev1", 0, ev)
	first.peer.Push("env-2", "Ev1", 1, ev)
	first.peer.Push("env-3", "Ev2", 0, slackpeer.AppMention("C1", "U1", "1700000000.000200", "", "<@"+peerBot+"> next"))
	got := first.WaitPublished(2)
	require.Equal(t, "next", got[1].Content, "its own retry is dropped")
	second.peer.Push("env-4", "Ev1", 1, ev)
	require.Equal(t, "hello", second.WaitPublished(1)[0].Content, "sets are not shared without Deps.Seen")
}
