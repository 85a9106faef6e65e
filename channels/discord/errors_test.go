package discord

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
)

func TestSendErrors(t *testing.T) {
	h := startHarness(t, nil)
	cases := []struct {
		name      string
		chat      string
		status    int
		body      string
		retry     time.Duration
		permanent bool
		typed     bool // a *channels.SendError at all
	}{
		{name: "rate limited", chat: dm, status: 429, body: `{"message":"You are being rate limited.","retry_after":1.5,"global":false}`,
			retry: 1500 * time.Millisecond, typed: true},
		{name: "missing permissions", chat: dm, status: 403, body: `{"message":"Missing Permissions","code":50013}`, permanent: true, typed: true},
		{name: "missing access", chat: dm, status: 403, body: `{"message":"Missing Access","code":50001}`, permanent: true, typed: true},
		{name: "unknown channel", chat: "900000000000000099", permanent: true, typed: true},
		{name: "not a channel id", chat: "general", permanent: true, typed: true},
		{name: "server error", chat: dm, status: 500, body: `{"message":"500: Internal Server Error","code":0}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.status != 0 {
				h.peer.Fail("POST", "/channels/"+tc.chat+"/messages", tc.status, tc.body)
			}
			err := channels.Deliver(context.Background(), h.Ch, reply(tc.chat, "", "t-"+tc.name, "hello"))
			require.Error(t, err)
			var se *channels.SendError
			require.Equal(t, tc.typed, errors.As(err, &se), "%v", err)
			if tc.typed {
				require.Equal(t, tc.permanent, se.Permanent, "%v", err)
				require.Equal(t, tc.retry, se.RetryAfter, "%v", err)
			}
		})
	}
	// After all that the channel still sends.
	require.NoError(t, channels.Deliver(context.Background(), h.Ch, reply(dm, "", "t-ok", "hello")))
	require.Len(t, h.peer.Messages(dm), 1)
}

func TestRefusedTokenFailsTheStart(t *testing.T) {
	cfgBlock := map[string]any{"token": "wrong-token"}
	h := startHarness(t, nil) // a peer to refuse it
	ch, err := New(depsFor(t, h.peer, cfgBlock))
	require.NoError(t, err)
	err = ch.Start(context.Background(), nil)
	require.ErrorContains(t, err, "channels.discord.token")
}
