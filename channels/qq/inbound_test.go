package qq

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/channeltest"
	"github.com/nanobot-durable/nanobot/channels/qq/qqpeer"
	"github.com/nanobot-durable/nanobot/protocol"
)

func TestC2CMessageIsPublished(t *testing.T) {
	h := startHarness(t, nil)
	id := h.peer.C2C(alice, "hello there")
	got := h.WaitPublished(1)[0]
	require.Equal(t, "qq:"+id, got.ID)
	require.Equal(t, protocol.Route{Channel: Name, ChatID: alice, SenderID: alice, ReplyTo: id}, got.Route)
	require.Equal(t, "hello there", got.Content)
	require.False(t, got.Group)
	require.Equal(t, id, got.Metadata[channels.MetaMessageID])
}

// A group @-message is the group's chat, from its member; a group message
// without the mention (GROUP_MESSAGE_CREATE) is not nanobot's to answer.
func TestGroupAtMessageIsPublished(t *testing.T) {
	h := startHarness(t, nil)
	h.peer.Group(group, bob, "just chatting")
	id := h.peer.GroupAt(group, bob, "what is 2+2?")
	got := h.WaitPublished(1)[0]
	require.Equal(t, "qq:"+id, got.ID, "the message without a mention was ignored")
	require.Equal(t, protocol.Route{Channel: Name, ChatID: group, SenderID: bob, ReplyTo: id}, got.Route)
	require.Equal(t, "what is 2+2?", got.Content, "QQ's leading space is trimmed")
	require.True(t, got.Group)
	require.True(t, h.Ch.isGroup(group), "its replies go to the group endpoint")
	h.sync()
	require.Len(t, h.Published(), 2)
}

// A refused sender (allowFrom) gets nothing downloaded and no ack.
func TestRefusedSenderIsNotTakenFurther(t *testing.T) {
	h := startHarness(t, map[string]any{"ackMessage": "⏳ Processing..."})
	h.Refuse(bob)
	url := h.peer.AddFile("a.png", []byte("png"))
	h.peer.C2C(bob, "let me in", qqpeer.Attachment{ContentType: "image/png", Filename: "a.png", URL: url, Size: 3})
	h.sync()
	require.Len(t, h.Published(), 1, "only the sync message")
	entries, _ := os.ReadDir(filepath.Join(h.Workspace, "media"))
	require.Empty(t, entries, "nothing is downloaded for a refused sender")
	require.Empty(t, h.peer.Messages(bob), "no ack for a refused sender")
	require.Len(t, h.peer.Messages(alice), 1, "the admitted sync message got its ack")
	require.Equal(t, "⏳ Processing...", h.peer.Messages(alice)[0].Content)
}

// An image is downloaded after admission and listed as nanobot does.
func TestImageIsDownloaded(t *testing.T) {
	h := startHarness(t, nil)
	url := h.peer.AddFile("cat.png", []byte("\x89PNG cat"))
	h.peer.C2C(alice, "", qqpeer.Attachment{ContentType: "image/png", Filename: "cat.png", URL: url, Size: 8})
	got := h.WaitPublished(1)[0]
	require.Len(t, got.Media, 1)
	data, err := os.ReadFile(got.Media[0])
	require.NoError(t, err)
	require.Equal(t, "\x89PNG cat", string(data))
	require.Equal(t, filepath.Join(h.Workspace, "media"), filepath.Dir(got.Media[0]))
	require.True(t, strings.HasPrefix(got.Content, "[Image]\nReceived files:\n- cat.png\n  saved: "), got.Content)

	var fetched atomic.Bool
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fetched.Store(true)
		_, _ = w.Write([]byte("not QQ's"))
	}))
	defer other.Close()
	h.peer.C2C(alice, "look", qqpeer.Attachment{ContentType: "image/png", Filename: "x.png", URL: other.URL + "/x.png"})
	got = h.WaitPublished(2)[1]
	require.Empty(t, got.Media, "only QQ's CDN is fetched")
	require.False(t, fetched.Load(), "another host is never asked")
	require.Equal(t, "look\n\nReceived files:\n- x.png\n  saved: [download failed]", got.Content)
}

// QQ redelivers on resume; a message id is taken in once, across restarts too.
func TestRedeliveredMessageIsTakenOnce(t *testing.T) {
	h := startHarness(t, nil)
	payload := fmt.Sprintf(`{"id":"ROBOT1.0_dup","content":"once","author":{"user_openid":"%s"}}`, alice)
	h.peer.DispatchRaw(eventC2CMessage, []byte(payload))
	h.WaitPublished(1)
	h.peer.DispatchRaw(eventC2CMessage, []byte(payload))
	h.sync()
	require.Len(t, h.Published(), 2, "the duplicate was dropped")
	require.Contains(t, h.Logs.String(), "qq message redelivered; already taken in")
	data, err := os.ReadFile(h.Ch.seenFile)
	require.NoError(t, err)
	require.Contains(t, string(data), "message:ROBOT1.0_dup", "the handled ids are kept under the home")
}

// Payloads QQ would never send are logged with their id and dropped.
func TestBadPayloadsAreDropped(t *testing.T) {
	h := startHarness(t, nil)
	author := fmt.Sprintf(`{"user_openid":"%s"}`, alice)
	cases := []struct{ name, event, data, logged string }{
		{"no author", eventC2CMessage, `{"id":"ROBOT1.0_b1","content":"hi"}`, "message_id=ROBOT1.0_b1"},
		{"null author", eventC2CMessage, `{"id":"ROBOT1.0_b2","content":"hi","author":null}`, "message_id=ROBOT1.0_b2"},
		{"content a number", eventC2CMessage, `{"id":"ROBOT1.0_b3","content":42,"author":` + author + `}`, "message_id=ROBOT1.0_b3"},
		{"id a number", eventC2CMessage, `{"id":12345,"content":"hi","author":` + author + `}`, "message_id=12345"},
		{"group without group_openid", eventGroupMessage, `{"id":"ROBOT1.0_b4","content":"hi","author":{"member_openid":"M1"}}`, "message_id=ROBOT1.0_b4"},
		{"openid with a slash", eventC2CMessage, `{"id":"ROBOT1.0_b5","content":"hi","author":{"user_openid":"../x"}}`, "message_id=ROBOT1.0_b5"},
		{"attachments an object", eventC2CMessage, `{"id":"ROBOT1.0_b6","content":"hi","author":` + author + `,"attachments":{}}`, "message_id=ROBOT1.0_b6"},
		{"huge content", eventC2CMessage, `{"id":"ROBOT1.0_b7","content":"` + strings.Repeat("x", 20000) + `","author":` + author + `}`, "message_id=ROBOT1.0_b7"},
		{"null data", eventC2CMessage, `null`, "message_id=?"},
		{"data an array", eventC2CMessage, `[1,2]`, "message_id=?"},
		{"broken frame", eventC2CMessage, `{"id":"ROBOT1.0_b8",`, "qq gateway frame unreadable"},
	}
	for _, tc := range cases {
		h.peer.DispatchRaw(tc.event, []byte(tc.data))
	}
	h.sync()
	require.Len(t, h.Published(), 1, "only the sync message was published")
	logs := h.Logs.String()
	for _, tc := range cases {
		require.Contains(t, logs, tc.logged, tc.name)
	}
	require.Equal(t, 10, strings.Count(logs, "qq message dropped"), "each bad message is logged once")
	require.Equal(t, 1, h.peer.Stats().Connections, "a bad payload does not cost the connection")
}

// The loss rule on QQ: a message Temporal did not take is not marked
// taken, so QQ's redelivery of it after a restart reaches the agent (an
// older build marked it on arrival and lost it).
func TestRefusedPublishIsTakenInAgainAfterARestart(t *testing.T) {
	h := startHarness(t, nil)
	h.Down.Store(true)
	payload := fmt.Sprintf(`{"id":"ROBOT1.0_lost","content":"keep me","author":{"user_openid":"%s"}}`, alice)
	h.peer.DispatchRaw(eventC2CMessage, []byte(payload))
	require.Eventually(t, func() bool { return strings.Contains(h.Logs.String(), "could not be handed to the agent") },
		10*time.Second, 10*time.Millisecond)
	h.Stop()

	again := channeltest.Start(t, h.Env, New) // the same home: the same handled ids
	h.peer.DispatchRaw(eventC2CMessage, []byte(payload))
	got := again.WaitPublished(1)
	require.Equal(t, "qq:ROBOT1.0_lost", got[0].ID)
	h.peer.DispatchRaw(eventC2CMessage, []byte(payload))
	again.WaitLast("qq:" + h.peer.C2C(alice, "sync"))
	require.Len(t, again.Published(), 2, "taken once: the next redelivery is a duplicate")
}
