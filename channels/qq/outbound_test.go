package qq

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/channeltest"
	"github.com/nanobot-durable/nanobot/channels/qq/qqpeer"
	"github.com/nanobot-durable/nanobot/protocol"
)

func send(t *testing.T, h *harness, r channels.Reply) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return channels.Deliver(ctx, h.Ch, r)
}

// A C2C answer is a passive reply: msg_type 0, the user's msg_id, msg_seq 1,
// the Markdown rendered as plain text.
func TestReplyToAC2CMessage(t *testing.T) {
	h := startHarness(t, nil)
	id := h.peer.C2C(alice, "hi")
	h.WaitPublished(1)
	require.NoError(t, send(t, h, reply(alice, id, "t1", "Hello, **QQ**.")))
	msgs := h.peer.Messages(alice)
	require.Len(t, msgs, 1)
	require.False(t, msgs[0].Group)
	require.Equal(t, 0, msgs[0].MsgType)
	require.Equal(t, "Hello, QQ.", msgs[0].Content)
	require.Equal(t, id, msgs[0].MsgID)
	require.Equal(t, 1, msgs[0].MsgSeq)
}

// A group's answer goes to /v2/groups/{group_openid}/messages.
func TestReplyToAGroup(t *testing.T) {
	h := startHarness(t, nil)
	id := h.peer.GroupAt(group, bob, "hi")
	h.WaitPublished(1)
	require.NoError(t, send(t, h, reply(group, id, "t1", "Hello, group.")))
	msgs := h.peer.Messages(group)
	require.Len(t, msgs, 1)
	require.True(t, msgs[0].Group)
	require.Equal(t, id, msgs[0].MsgID)
	require.Equal(t, 1, h.peer.CallsTo("POST", "/v2/groups/"+group+"/messages"))
}

// msgFormat markdown sends msg_type 2 with the Markdown as written.
func TestMarkdownFormat(t *testing.T) {
	h := startHarness(t, map[string]any{"msgFormat": "markdown"})
	id := h.peer.C2C(alice, "hi")
	h.WaitPublished(1)
	require.NoError(t, send(t, h, reply(alice, id, "t1", "Hello, **QQ**.")))
	msgs := h.peer.Messages(alice)
	require.Len(t, msgs, 1)
	require.Equal(t, 2, msgs[0].MsgType)
	require.Equal(t, "Hello, **QQ**.", msgs[0].Content)
}

// A long answer is split at the limit; each part gets the next msg_seq of
// the one msg_id (after the ack's), and a retried delivery sends nothing twice.
func TestPartsTakeIncreasingSeqs(t *testing.T) {
	h := startHarness(t, map[string]any{"ackMessage": "⏳ Processing..."})
	id := h.peer.C2C(alice, "tell me a story")
	h.WaitPublished(1)
	require.Eventually(t, func() bool { return len(h.peer.Messages(alice)) == 1 }, 10*time.Second, 10*time.Millisecond, "the ack")
	text := strings.Repeat("word ", 500) + "\n\n" + strings.Repeat("more ", 300)
	r := reply(alice, id, "t1", text)
	require.NoError(t, send(t, h, r))
	msgs := h.peer.Messages(alice)
	parts := channels.Parts(r, maxMessageRunes)
	require.Greater(t, len(parts), 1)
	require.Len(t, msgs, 1+len(parts), "the ack and the parts")
	for i, m := range msgs {
		require.Equal(t, id, m.MsgID)
		require.Equal(t, i+1, m.MsgSeq, "msg_seq increments per message to one msg_id")
		require.LessOrEqual(t, len([]rune(m.Content)), maxMessageRunes)
	}
	require.NoError(t, send(t, h, r), "a retried delivery (no progress recorded here) is QQ-deduplicated")
	require.Len(t, h.peer.Messages(alice), 1+len(parts), "the same parts reuse their msg_seq, which QQ drops")
}

// Files go first: uploaded (base64 or by URL) then posted as msg_type 7; a
// file that cannot be read becomes nanobot's failure line.
func TestMediaOut(t *testing.T) {
	h := startHarness(t, nil)
	id := h.peer.C2C(alice, "send pictures")
	h.WaitPublished(1)
	require.NoError(t, os.WriteFile(filepath.Join(h.Workspace, "chart.png"), []byte("png-bytes"), 0o600))
	r := reply(alice, id, "t1", "Here.")
	r.Media = []string{"chart.png", "https://example.com/report.pdf", "missing.txt"}
	require.NoError(t, send(t, h, r))
	ups := h.peer.Uploads()
	require.Len(t, ups, 2)
	require.Equal(t, 1, ups[0].FileType)
	require.Equal(t, "png-bytes", string(ups[0].Data))
	require.Empty(t, ups[0].FileName, "an image with a name would show as a file")
	require.Equal(t, 4, ups[1].FileType)
	require.Equal(t, "https://example.com/report.pdf", ups[1].URL)
	require.Equal(t, "report.pdf", ups[1].FileName)
	msgs := h.peer.Messages(alice)
	require.Len(t, msgs, 4)
	require.Equal(t, 7, msgs[0].MsgType)
	require.Equal(t, "peer-file-info-1", msgs[0].FileInfo)
	require.Equal(t, 7, msgs[1].MsgType)
	require.Equal(t, "[Attachment send failed: missing.txt]", msgs[2].Content)
	require.Equal(t, "Here.", msgs[3].Content)
	for i, m := range msgs {
		require.Equal(t, i+1, m.MsgSeq)
	}
}

// QQ's rate limit (429, or code 22009) waits; a refusal is permanent; a
// 5xx is retried with backoff.
func TestSendErrors(t *testing.T) {
	h := startHarness(t, nil)
	id := h.peer.C2C(alice, "hi")
	h.WaitPublished(1)
	h.peer.Fail("POST", "/v2/users/", 429, `{"code":22009,"message":"msg limit exceed"}`)
	err := send(t, h, reply(alice, id, "t1", "a"))
	var se *channels.SendError
	require.ErrorAs(t, err, &se)
	require.Equal(t, defaultRetryAfter, se.RetryAfter)
	require.False(t, se.Permanent)

	h.peer.Fail("POST", "/v2/users/", 200+300, `{"code":22009,"message":"msg limit exceed"}`)
	require.ErrorAs(t, send(t, h, reply(alice, id, "t2", "b")), &se)
	require.Positive(t, se.RetryAfter, "code 22009 is the rate limit whatever the status")

	h.peer.Fail("POST", "/v2/users/", 400, `{"code":40034006,"message":"bad request"}`)
	require.ErrorAs(t, send(t, h, reply(alice, id, "t3", "c")), &se)
	require.True(t, se.Permanent)

	h.peer.Fail("POST", "/v2/users/", 502, `{"code":500,"message":"bad gateway"}`)
	err = send(t, h, reply(alice, id, "t4", "d"))
	require.Error(t, err)
	require.False(t, errors.As(err, &se), "a 5xx is retried with backoff")

	err = send(t, h, channels.Reply{Route: protocol.Route{Channel: Name, ChatID: "../etc"}, Text: "x"})
	require.ErrorAs(t, err, &se)
	require.True(t, se.Permanent, "a chat id that is not an openid")
}

// A token is renewed before it expires; one QQ refuses (401) is replaced
// and the call made again.
func TestTokenRefresh(t *testing.T) {
	h := startHarness(t, nil)
	id := h.peer.C2C(alice, "hi")
	h.WaitPublished(1)
	h.peer.ExpireTokens()
	require.NoError(t, send(t, h, reply(alice, id, "t1", "after expiry")))
	require.Equal(t, 1, h.peer.Stats().Unauthorized, "one refusal, then the new token")
	require.Equal(t, 2, h.peer.Stats().TokensIssued)

	h.peer.SetTokenTTL(2)
	h.peer.ExpireTokens()
	require.NoError(t, send(t, h, reply(alice, id, "t2", "short-lived")))
	issued := h.peer.Stats().TokensIssued
	before := h.peer.Stats().Unauthorized
	turn := 3
	require.Eventually(t, func() bool {
		turn++
		r := reply(alice, id, "t"+string(rune('a'+turn)), "again")
		return send(t, h, r) == nil && h.peer.Stats().TokensIssued > issued
	}, 10*time.Second, 100*time.Millisecond, "a token of 2 s is renewed before it runs out")
	require.Equal(t, before, h.peer.Stats().Unauthorized, "renewed ahead: no call was refused")
	st := h.peer.Stats()
	require.True(t, st.TokenIssues[issued].Before(st.TokenExpiries[issued-1]), "the new token was fetched before the old one ran out")
	calls := h.peer.Calls()
	require.Equal(t, "QQBot peer-access-token-4", calls[len(calls)-1].Auth)
}

// A send that answers no message (the message tool, a cron job) is an
// active message: no msg_id, no msg_seq.
func TestActiveMessage(t *testing.T) {
	h := startHarness(t, nil)
	require.NoError(t, send(t, h, channels.Reply{ID: "d1", Route: protocol.Route{Channel: Name, ChatID: alice}, Text: "reminder"}))
	msgs := h.peer.Messages(alice)
	require.Len(t, msgs, 1)
	require.Empty(t, msgs[0].MsgID)
	require.Zero(t, msgs[0].MsgSeq)
	require.Equal(t, "reminder", msgs[0].Content)
}

// Which chats are groups outlives a restart: a reply after it still goes
// to the group's endpoint.
func TestGroupsAreRememberedAcrossARestart(t *testing.T) {
	peer := qqpeer.New(t)
	deps := depsFor(t, peer, nil)
	first, err := New(deps)
	require.NoError(t, err)
	first.groups.Add(group)
	second, err := New(deps)
	require.NoError(t, err)
	require.True(t, second.isGroup(group))
	require.False(t, second.isGroup(alice))
}

// Stop closes the gateway and ends the loop; the channel says it is down.
func TestStopEndsCleanly(t *testing.T) {
	peer := qqpeer.New(t)
	deps := depsFor(t, peer, nil)
	ch, err := New(deps)
	require.NoError(t, err)
	require.NoError(t, ch.Start(context.Background(), channeltest.NewPublisher(t).Publish))
	require.Eventually(t, ch.Connected, 10*time.Second, 10*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, ch.Stop(ctx))
	require.False(t, ch.Connected())
	require.Eventually(t, func() bool { return !peer.Connected() }, 5*time.Second, 10*time.Millisecond, "the socket was closed")
	require.Equal(t, 1, peer.Stats().Connections, "no reconnect after Stop")
}

// Refused credentials fail the start, naming the keys.
func TestBadSecretFailsTheStart(t *testing.T) {
	peer := qqpeer.New(t)
	ch, err := New(depsFor(t, peer, map[string]any{"secret": "wrong"}))
	require.NoError(t, err)
	err = ch.Start(context.Background(), channeltest.NewPublisher(t).Publish)
	require.ErrorContains(t, err, "channels.qq.appId/secret")
	require.Zero(t, peer.Stats().Connections)
}

// A channel that starts afresh (a restart, another gateway) does not know
// the msg_seqs already used for a message: the ones QQ refuses as repeated
// are skipped and the part goes out once.
func TestSeqsUsedBeforeARestartAreSkipped(t *testing.T) {
	h := startHarness(t, map[string]any{"ackMessage": "⏳ Processing..."})
	id := h.peer.C2C(alice, "hi")
	h.WaitPublished(1)
	require.Eventually(t, func() bool { return len(h.peer.Messages(alice)) == 1 }, 10*time.Second, 10*time.Millisecond, "the ack")
	require.NoError(t, send(t, h, reply(alice, id, "t1", "part one")))

	restarted, err := New(depsFor(t, h.peer, nil))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, channels.Deliver(ctx, restarted, reply(alice, id, "t2", "after the restart")))
	msgs := h.peer.Messages(alice)
	require.Len(t, msgs, 3)
	require.Equal(t, "after the restart", msgs[2].Content)
	require.Equal(t, 3, msgs[2].MsgSeq, "seqs 1 (the ack) and 2 were taken")
}
