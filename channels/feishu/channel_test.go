package feishu

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/channeltest"
	"github.com/nanobot-durable/nanobot/channels/feishu/feishupeer"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
)

func TestConnectsWithDiscoveredEndpointAndPings(t *testing.T) {
	h := startHarness(t, nil)
	require.True(t, h.Ch.Connected())
	require.Equal(t, 1, h.peer.Connections())
	require.Eventually(t, func() bool { return h.peer.Pings() >= 1 }, 5*time.Second, 10*time.Millisecond, "the bot pings at once")
	require.Contains(t, h.Ch.Describe(), feishupeer.BotOpenID)
	require.Equal(t, 1, h.peer.TokensIssued())
	require.Equal(t, 1, h.peer.CallsTo("POST", "/callback/ws/endpoint"))
}

func TestPongConfigChangesThePingInterval(t *testing.T) {
	h := startHarness(t, nil)
	require.Eventually(t, func() bool { return h.peer.Pings() >= 1 }, 5*time.Second, 10*time.Millisecond)
	h.peer.PongConfig(&feishupeer.ClientConfig{PingInterval: 1, ReconnectInterval: 1, ReconnectCount: -1})
	// The endpoint said 120 s: only the first pong's config brings the next pings.
	h.peer.Drop() // the reconnect's first ping gets the new pong
	require.Eventually(t, func() bool { return h.peer.Pings() >= 4 }, 10*time.Second, 20*time.Millisecond, "pings every second after the pong")
}

func TestDMIsPublishedAndAcked(t *testing.T) {
	h := startHarness(t, nil)
	id := h.peer.Say(feishupeer.Incoming{Sender: alice, Text: "hello there"})
	got := h.WaitPublished(1)[0]
	require.Equal(t, "feishu:"+id, got.ID)
	require.Equal(t, alice.OpenID, got.Route.ChatID, "a p2p chat is the user's open_id, as in nanobot")
	require.Equal(t, alice.OpenID, got.Route.SenderID)
	require.Equal(t, id, got.Route.ReplyTo)
	require.Equal(t, "hello there", got.Content)
	require.False(t, got.Group)
	require.Nil(t, got.Scope, "a p2p chat has the chat's session (or the unified one)")
	require.Equal(t, id, got.Metadata[channels.MetaMessageID])
	require.Equal(t, "p2p", got.Metadata["chat_type"])
	require.Eventually(t, func() bool { return h.peer.Acked("frame-" + id) }, 5*time.Second, 10*time.Millisecond)
	for _, a := range h.peer.Acks() {
		require.JSONEq(t, `{"code":200,"headers":null,"data":null}`, a.Payload)
		require.NotEmpty(t, a.BizRT, "the ack says how long the handler took")
	}
}

func TestGroupNeedsAMentionByDefault(t *testing.T) {
	h := startHarness(t, nil)
	h.peer.Say(feishupeer.Incoming{ChatID: group, Group: true, Sender: alice, Text: "just chatting"})
	h.peer.Say(feishupeer.Incoming{ChatID: group, Group: true, Sender: alice, Text: "@_user_1 hi @_user_2", Mentions: []feishupeer.User{bob, feishupeer.Bot}})
	id := h.peer.Say(feishupeer.Incoming{ChatID: group, Group: true, Sender: alice, Text: "@_user_1 what's up, cc @_user_2",
		Mentions: []feishupeer.User{feishupeer.Bot, bob}})
	last := h.sync()
	got := h.Published()
	require.Len(t, got, 3, "the chatter is skipped: %+v", got)
	require.Equal(t, "@Bob (ou_bob_0002, user id: u_bob) hi @nanobot-peer ("+feishupeer.BotOpenID+")", got[0].Content,
		"a mention of the bot elsewhere in the text counts; mentions are spelt out")
	m := got[1]
	require.Equal(t, "feishu:"+id, m.ID)
	require.Equal(t, group, m.Route.ChatID)
	require.True(t, m.Group)
	require.Equal(t, "what's up, cc @Bob (ou_bob_0002, user id: u_bob)", m.Content, "the leading bot mention is stripped")
	require.Equal(t, protocol.Within(id), m.Scope, "topicIsolation: a group message starts its own topic")
	require.Equal(t, "sync", last.Content)
}

func TestGroupPolicyOpenAndTopics(t *testing.T) {
	h := startHarness(t, map[string]any{"groupPolicy": "open", "topicIsolation": true})
	h.peer.Say(feishupeer.Incoming{ChatID: group, Group: true, Sender: alice, Text: "in a topic", RootID: "om_root_1", ThreadID: "omt_1"})
	got := h.WaitPublished(1)[0]
	require.Equal(t, "in a topic", got.Content)
	require.Equal(t, protocol.Within("om_root_1"), got.Scope, "a topic's messages share its root's session")
	require.Equal(t, "om_root_1", got.Route.ThreadID, "a topic is answered through its root message")
	require.Equal(t, "omt_1", got.Metadata["thread_id"])
	require.Equal(t, "om_root_1", got.Metadata["root_id"])

	h2 := startHarness(t, map[string]any{"groupPolicy": "open", "topicIsolation": false})
	h2.peer.Say(feishupeer.Incoming{ChatID: group, Group: true, Sender: alice, Text: "no isolation"})
	require.Equal(t, protocol.OwnChat(), h2.WaitPublished(1)[0].Scope, "without topicIsolation the group is one session, unified or not")
}

func TestRefusedSenderIsNotDownloaded(t *testing.T) {
	h := startHarness(t, nil)
	h.Refuse(bob.OpenID) // the manager's allowFrom said no
	h.peer.Resource("img_k1", "cat.png", []byte("png bytes"))
	h.peer.Say(feishupeer.Incoming{Sender: bob, Type: "image", Content: map[string]string{"image_key": "img_k1"}})
	h.sync()
	require.Len(t, h.Published(), 1, "only the sync")
	require.Zero(t, countPrefix(h.peer.Calls(), "/open-apis/im/v1/messages/"), "nothing was fetched for a refused sender")
}

func TestBotMessagesAreIgnored(t *testing.T) {
	h := startHarness(t, nil)
	h.peer.Say(feishupeer.Incoming{Sender: bob, Text: "from a bot", SenderType: "bot"})
	require.Equal(t, "sync", h.sync().Content)
	require.Len(t, h.Published(), 1)
}

func countPrefix(calls []feishupeer.Call, prefix string) int {
	n := 0
	for _, c := range calls {
		if strings.HasPrefix(c.Path, prefix) {
			n++
		}
	}
	return n
}

func TestImageAndFileDownloadedAfterAdmission(t *testing.T) {
	h := startHarness(t, nil)
	h.peer.Resource("img_k1", "cat.png", []byte("png bytes"))
	h.peer.Resource("file_k1", "report.pdf", []byte("%PDF"))
	h.peer.Say(feishupeer.Incoming{Sender: alice, Type: "image", Content: map[string]string{"image_key": "img_k1"}})
	h.peer.Say(feishupeer.Incoming{Sender: alice, Type: "file", Content: map[string]string{"file_key": "file_k1", "file_name": "report.pdf"}})
	h.peer.Say(feishupeer.Incoming{Sender: alice, Type: "image", Content: map[string]string{"image_key": "missing"}})
	got := h.WaitPublished(3)
	require.Len(t, got[0].Media, 1)
	data, err := os.ReadFile(got[0].Media[0])
	require.NoError(t, err)
	require.Equal(t, "png bytes", string(data))
	require.True(t, strings.HasPrefix(got[0].Media[0], h.Workspace), "saved in the workspace")
	require.Equal(t, "[image: "+got[0].Media[0]+"]", got[0].Content)
	require.Len(t, got[1].Media, 1)
	require.True(t, strings.HasSuffix(got[1].Media[0], "report.pdf"))
	require.Empty(t, got[2].Media)
	require.Equal(t, "[image: download failed]", got[2].Content)
	require.Contains(t, h.Logs.String(), "feishu resource not downloaded")
}

func TestPostIsFlattened(t *testing.T) {
	h := startHarness(t, nil)
	h.peer.Resource("img_p1", "inline.png", []byte("inline"))
	post := map[string]any{"zh_cn": map[string]any{"title": "Plan", "content": []any{
		[]any{map[string]any{"tag": "text", "text": "see"}, map[string]any{"tag": "a", "text": "docs", "href": "https://example.invalid"},
			map[string]any{"tag": "at", "user_name": "Bob"}},
		[]any{map[string]any{"tag": "code_block", "language": "go", "text": "x := 1"}, map[string]any{"tag": "img", "image_key": "img_p1"}},
	}}}
	h.peer.Say(feishupeer.Incoming{Sender: alice, Type: "post", Content: post})
	got := h.WaitPublished(1)[0]
	require.True(t, strings.HasPrefix(got.Content, "Plan see docs @Bob \n```go\nx := 1\n```"), got.Content)
	require.Len(t, got.Media, 1)
}

func TestFragmentedEventIsReassembled(t *testing.T) {
	h := startHarness(t, nil)
	h.peer.Fragment(3)
	id := h.peer.Say(feishupeer.Incoming{Sender: alice, Text: strings.Repeat("long message ", 50)})
	got := h.WaitPublished(1)[0]
	require.Equal(t, "feishu:"+id, got.ID)
	require.Equal(t, strings.TrimSpace(strings.Repeat("long message ", 50)), strings.TrimSpace(got.Content))
	require.Eventually(t, func() bool { return h.peer.Acked("frame-" + id) }, 5*time.Second, 10*time.Millisecond)
}

func TestRedeliveredEventIsTakenInOnce(t *testing.T) {
	h := startHarness(t, nil)
	id := h.peer.Say(feishupeer.Incoming{Sender: alice, Text: "once"})
	h.WaitPublished(1)
	h.peer.Redeliver(id)
	h.sync()
	require.Len(t, h.Published(), 2, "the redelivery is not published again")
	require.Contains(t, h.Logs.String(), "feishu message redelivered")
	acks := 0
	for _, a := range h.peer.Acks() {
		if a.MessageID == "frame-"+id {
			acks++
		}
	}
	require.Equal(t, 2, acks, "the redelivery is acked too, or Feishu keeps sending it")
}

func TestRedeliveryAfterARestartIsTakenInOnce(t *testing.T) {
	h := startHarness(t, nil)
	id := h.peer.Say(feishupeer.Incoming{Sender: alice, Text: "before the restart"})
	h.WaitPublished(1)
	h.Stop()

	second := restartOn(t, h.peer, h.Env) // the same home: the handled ids are remembered
	h.peer.Redeliver(id)
	require.Equal(t, "sync", second.sync().Content)
	require.Len(t, second.Published(), 1, "the redelivery was not taken in again")
}

// The loss rule on Feishu: a message Temporal did not take is neither
// marked taken nor acked (an older build acked it on arrival), so Feishu
// delivers it again, and its redelivery after a restart reaches the agent.
func TestRefusedPublishIsTakenInAgainAfterARestart(t *testing.T) {
	h := startHarness(t, nil)
	h.Down.Store(true)
	id := h.peer.Say(feishupeer.Incoming{Sender: alice, Text: "keep me"})
	require.Eventually(t, func() bool { return strings.Contains(h.Logs.String(), "could not be handed to the agent") },
		10*time.Second, 10*time.Millisecond)
	h.Down.Store(false)
	require.Equal(t, "sync", h.sync().Content, "the queue moved past it")
	require.False(t, h.peer.Acked("frame-"+id), "not acked: Feishu delivers it again")
	h.Stop()

	second := restartOn(t, h.peer, h.Env)
	h.peer.Redeliver(id)
	got := second.WaitPublished(1)
	require.Equal(t, "feishu:"+id, got[0].ID)
	require.Equal(t, "keep me", got[0].Content)
	require.Eventually(t, func() bool { return h.peer.Acked("frame-" + id) }, 5*time.Second, 10*time.Millisecond,
		"acked once taken in")
}

func TestBadPayloadsAreDroppedWithTheirID(t *testing.T) {
	h := startHarness(t, nil)
	require.True(t, h.peer.SendRaw([]byte("not a frame at all")))
	h.peer.SayPayload("frame-broken-1", []byte(`{"schema":"2.0","header":{"event_type":"im.message.receive_v1"},"event":{"message":"nope"}}`))
	h.peer.SayPayload("frame-broken-2", []byte(`{"schema":"2.0","header":{"event_id":"ev_x","event_type":"im.message.receive_v1"},`+
		`"event":{"sender":{"sender_id":{"open_id":"ou_a"},"sender_type":"user"},"message":{"message_id":"om_bad_1","chat_type":"p2p","message_type":"text"}}}`))
	h.peer.SayPayload("frame-broken-3", []byte(`{{{`))
	require.Equal(t, "sync", h.sync().Content, "the channel still works")
	logs := h.Logs.String()
	require.Contains(t, logs, "feishu ws: bad frame dropped")
	require.Contains(t, logs, "message_id=om_bad_1", "the dropped message is named")
	require.Contains(t, logs, "message_id=frame-broken-3")
	require.Len(t, h.Published(), 1)
}

func TestReconnectsAfterADrop(t *testing.T) {
	h := startHarness(t, nil)
	h.peer.Drop()
	require.Eventually(t, func() bool { return h.peer.Connections() == 2 && h.peer.Connected() }, 10*time.Second, 10*time.Millisecond,
		"the bot discovers the endpoint again and reconnects")
	require.Equal(t, "sync", h.sync().Content)
	require.True(t, h.Ch.Connected())
	require.Contains(t, h.Logs.String(), "feishu long connection dropped")
}

func TestConnectedFollowsTheSocket(t *testing.T) {
	h := startHarness(t, nil)
	require.True(t, h.Ch.Connected())
	h.peer.SetClientConfig(feishupeer.ClientConfig{ReconnectInterval: 60, ReconnectNonce: 60, PingInterval: 120})
	h.peer.Drop()
	require.Eventually(t, func() bool { return !h.Ch.Connected() }, 10*time.Second, 10*time.Millisecond)
}

func TestWrongSecretFailsTheStart(t *testing.T) {
	peer := feishupeer.New(t)
	deps := depsFor(t, peer, map[string]any{"appSecret": "wrong"})
	ch, err := New(deps)
	require.NoError(t, err)
	err = ch.Start(context.Background(), channeltest.NewPublisher(t).Publish)
	require.ErrorContains(t, err, "feishu refused")
	require.False(t, peer.Connected())
}

func TestEncryptedEventsAreDecrypted(t *testing.T) {
	h := startHarness(t, map[string]any{"encryptKey": "peer-encrypt-key"})
	h.peer.EncryptWith("peer-encrypt-key")
	id := h.peer.Say(feishupeer.Incoming{Sender: alice, Text: "secret hello"})
	got := h.WaitPublished(1)[0]
	require.Equal(t, "feishu:"+id, got.ID)
	require.Equal(t, "secret hello", got.Content)

	h.peer.EncryptWith("another key")
	h.peer.Say(feishupeer.Incoming{Sender: alice, Text: "wrong key"})
	h.peer.EncryptWith("")
	require.Equal(t, "sync", h.sync().Content)
	require.Len(t, h.Published(), 2, "an event that does not decrypt is dropped")
	require.Contains(t, h.Logs.String(), "wrong channels.feishu.encryptKey")
}

func TestEndpointDiscoveryIsRetriedWithBackoff(t *testing.T) {
	peer := feishupeer.New(t)
	peer.Fail("POST", "/callback/ws/endpoint", 200, 1000040343, 2) // Feishu's internal error, twice
	h := startOn(t, peer, nil)                                     // waits until connected
	require.Equal(t, 1, peer.Connections(), "the third discovery handed out the URL")
	require.Equal(t, 3, peer.CallsTo("POST", "/callback/ws/endpoint"))
	require.Contains(t, h.Logs.String(), "feishu long connection failed")
	require.Equal(t, "sync", h.sync().Content)
}

func TestAReplyQuotesItsParent(t *testing.T) {
	h := startHarness(t, nil)
	parent := h.peer.Say(feishupeer.Incoming{Sender: alice, Text: "the original question"})
	h.peer.Say(feishupeer.Incoming{Sender: alice, Text: "and this", ParentID: parent})
	h.peer.Say(feishupeer.Incoming{Sender: alice, Text: "gone", ParentID: "om_unknown"})
	got := h.WaitPublished(3)
	require.Equal(t, "[Reply to: the original question]\nand this", got[1].Content)
	require.Equal(t, "gone", got[2].Content, "a parent that cannot be fetched is left out")
}

func TestStopEndsTheConnection(t *testing.T) {
	h := startHarness(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, h.Ch.Stop(ctx))
	require.Eventually(t, func() bool { return !h.peer.Connected() }, 5*time.Second, 10*time.Millisecond)
	require.False(t, h.Ch.Connected())
	n := h.peer.Connections()
	require.Never(t, func() bool { return h.peer.Connections() > n }, 300*time.Millisecond, 20*time.Millisecond, "no reconnect after Stop")
}

func TestRefusedHandshakeIsNamed(t *testing.T) {
	peer := feishupeer.New(t)
	peer.RefuseHandshake(514, 1000040350, "exceed connection limit")
	deps := depsFor(t, peer, nil)
	logs := &testenv.SyncBuffer{}
	deps.Log = slog.New(slog.NewTextHandler(logs, nil))
	ch, err := New(deps)
	require.NoError(t, err)
	require.NoError(t, ch.Start(context.Background(), channeltest.NewPublisher(t).Publish))
	defer func() { _ = ch.Stop(context.Background()) }()
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "too many connections for the app") }, 10*time.Second, 10*time.Millisecond,
		"the refusal is logged with its reason:\n%s", logs)
	require.False(t, ch.Connected())
}
