package dingtalk

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/dingtalk/dingtalkpeer"
	"github.com/nanobot-durable/nanobot/protocol"
)

func TestSendErrors(t *testing.T) {
	h := startHarness(t, nil)
	route := protocol.Route{Channel: Name, ChatID: alice.StaffID} // no webhook: the robot API
	cases := []struct {
		name, path string
		status     int
		body       string
		header     http.Header
		retry      time.Duration
		permanent  bool
		typed      bool
	}{
		{name: "429 with Retry-After", path: dmSendPath, status: 429, body: `{"code":"Throttling","message":"too many"}`,
			header: http.Header{"Retry-After": {"3"}}, retry: 3 * time.Second, typed: true},
		{name: "QPS limit", path: dmSendPath, status: 403, body: `{"code":"Forbidden.AccessDenied.QpsLimitForAppkeyAndApi","message":"qps"}`,
			retry: time.Second, typed: true},
		{name: "bad request", path: dmSendPath, status: 400, body: `{"code":"InvalidParameter","message":"robotCode"}`, permanent: true, typed: true},
		{name: "server error", path: dmSendPath, status: 500, body: `{"code":"ServiceUnavailable","message":"later"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h.peer.Fail(tc.path, tc.status, tc.body, tc.header)
			err := channels.Deliver(context.Background(), h.Ch, reply(route, "t-"+tc.name, "hello"))
			require.Error(t, err)
			var se *channels.SendError
			require.Equal(t, tc.typed, errors.As(err, &se), "%v", err)
			if tc.typed {
				require.Equal(t, tc.permanent, se.Permanent, "%v", err)
				require.Equal(t, tc.retry, se.RetryAfter, "%v", err)
			}
		})
	}
	require.Empty(t, h.peer.Sent(alice.StaffID))
	require.NoError(t, channels.Deliver(context.Background(), h.Ch, reply(route, "t-ok", "hello")))
	require.Len(t, h.peer.Sent(alice.StaffID), 1, "after all that the channel still sends")
	// batchSend answers 200 but names the user it did not reach.
	h.peer.FlowControl(bob.StaffID)
	bobRoute := protocol.Route{Channel: Name, ChatID: bob.StaffID}
	err := channels.Deliver(context.Background(), h.Ch, reply(bobRoute, "t-flow", "x"))
	var flow *channels.SendError
	require.ErrorAs(t, err, &flow)
	require.Equal(t, time.Minute, flow.RetryAfter, "%v", err)
	h.peer.InvalidUser(bob.StaffID)
	err = channels.Deliver(context.Background(), h.Ch, reply(bobRoute, "t-invalid", "x"))
	require.ErrorAs(t, err, &flow)
	require.True(t, flow.Permanent, "%v", err)
	require.Empty(t, h.peer.Sent(bob.StaffID))

	chat := protocol.Route{Channel: Name, ChatID: "group:"}
	var se *channels.SendError
	require.ErrorAs(t, channels.Deliver(context.Background(), h.Ch, reply(chat, "t-bad", "x")), &se)
	require.True(t, se.Permanent, "a chat id that names nobody")
}

// The webhook's own limit (errcode 130101, per minute) waits a minute; its
// other refusals fall back to the robot API.
func TestWebhookErrors(t *testing.T) {
	h := startHarness(t, nil)
	h.peer.Say(dingtalkpeer.Incoming{From: alice, Text: "hi"})
	msg := h.WaitPublished(1)[0]
	h.peer.Fail("/robot/sendBySession", 200, `{"errcode":130101,"errmsg":"send too fast, exceed 20 times per minute"}`, nil)
	err := channels.Deliver(context.Background(), h.Ch, reply(msg.Route, "t1", "hello"))
	var se *channels.SendError
	require.ErrorAs(t, err, &se)
	require.Equal(t, time.Minute, se.RetryAfter)
	require.Empty(t, h.peer.Sent(alice.StaffID))

	h.peer.Fail("/robot/sendBySession", 200, `{"errcode":300001,"errmsg":"session expired"}`, nil)
	require.NoError(t, channels.Deliver(context.Background(), h.Ch, reply(msg.Route, "t2", "hello")))
	sent := h.peer.Sent(alice.StaffID)
	require.Len(t, sent, 1)
	require.Equal(t, "api", sent[0].Via)
	require.NotContains(t, h.Logs.String(), "session=", "the webhook URL (a credential) is never logged")
}

func TestAccessTokenIsRefreshed(t *testing.T) {
	h := startHarness(t, nil)
	route := protocol.Route{Channel: Name, ChatID: alice.StaffID}
	require.NoError(t, channels.Deliver(context.Background(), h.Ch, reply(route, "t1", "one")))
	require.Equal(t, 1, h.peer.Stats().Tokens)

	// Revoked: the refusal drops it, the retry fetches a new one.
	h.peer.RevokeTokens()
	err := channels.Deliver(context.Background(), h.Ch, reply(route, "t2", "two"))
	require.Error(t, err)
	require.ErrorContains(t, err, "InvalidAuthentication")
	require.NoError(t, channels.Deliver(context.Background(), h.Ch, reply(route, "t2", "two")))
	require.Equal(t, 2, h.peer.Stats().Tokens)

	// Near its expiry (a short-lived token: past its half): replaced before use.
	h.peer.SetTokenLifetime(2 * time.Second)
	h.peer.RevokeTokens()
	_ = channels.Deliver(context.Background(), h.Ch, reply(route, "t3", "three"))
	require.NoError(t, channels.Deliver(context.Background(), h.Ch, reply(route, "t3", "three")))
	require.Equal(t, 3, h.peer.Stats().Tokens)
	require.Eventually(t, func() bool {
		return channels.Deliver(context.Background(), h.Ch, reply(route, "t4", "four")) == nil && h.peer.Stats().Tokens == 4
	}, 5*time.Second, 100*time.Millisecond, "a token past its renewal point is fetched anew")

	tok, err := h.Ch.tokens.Get(context.Background())
	require.NoError(t, err)
	require.NotContains(t, h.Ch.secrets.Redact("calling with "+tok), tok, "fetched tokens join the log mask")
}

func TestRefusedCredentialsFailTheStart(t *testing.T) {
	h := startHarness(t, nil)
	deps := envFor(t, h.peer, map[string]any{"clientSecret": "wrong"}).Deps
	ch, err := New(deps)
	require.NoError(t, err)
	err = ch.Start(context.Background(), nil)
	require.ErrorContains(t, err, "channels.dingtalk.clientId/clientSecret")
	require.NoError(t, ch.Stop(context.Background()))
}

// A file DingTalk refuses for good goes out as nanobot's line naming it; a
// refusal that may pass later fails the part, for delivery to retry.
func TestFileRefusedByDingTalk(t *testing.T) {
	h := startHarness(t, nil)
	require.NoError(t, os.WriteFile(filepath.Join(h.Workspace, "report.txt"), []byte("the report"), 0o644))
	route := protocol.Route{Channel: Name, ChatID: alice.StaffID}
	r := reply(route, "t-refused", "")
	r.Media = []string{"report.txt"}

	h.peer.Fail("/media/upload", 400, `{"errcode":40004,"errmsg":"invalid media type"}`, nil)
	require.NoError(t, channels.Deliver(context.Background(), h.Ch, r))
	sent := h.peer.Sent(alice.StaffID)
	require.Len(t, sent, 1)
	require.Equal(t, "[Attachment send failed: report.txt]", sent[0].Text)

	h.peer.Fail("/media/upload", 503, `{"errcode":-1,"errmsg":"busy"}`, nil)
	r.Route.ReplyTo = "t-later"
	require.Error(t, channels.Deliver(context.Background(), h.Ch, r))
	require.Len(t, h.peer.Sent(alice.StaffID), 1, "nothing more went out")
	require.Empty(t, h.peer.Uploads())
}
