package mattermost

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/channeltest"
	"github.com/nanobot-durable/nanobot/channels/mattermost/mattermostpeer"
	"github.com/nanobot-durable/nanobot/protocol"
)

// Ids the tests talk in (Mattermost ids are 26 characters).
const (
	dm      = "dm00000000000000000000000a"
	town    = "town0000000000000000000000"
	private = "private0000000000000000000"
)

var (
	alice = mattermostpeer.User{ID: "alice000000000000000000000", Username: "alice"}
	bob   = mattermostpeer.User{ID: "bob00000000000000000000000", Username: "bob"}
)

type harness struct {
	t    *testing.T
	peer *mattermostpeer.Peer
	*channeltest.Run[*Channel]
}

// startHarness connects a channel with block (over the peer's serverUrl and
// token) to a new peer with a DM, an open and a private channel.
func startHarness(t *testing.T, block map[string]any) *harness {
	t.Helper()
	peer := mattermostpeer.New(t)
	peer.Channel(dm, mattermostpeer.TypeDirect)
	peer.Channel(town, mattermostpeer.TypeOpen)
	peer.Channel(private, mattermostpeer.TypePrivate)
	env := channeltest.NewEnv(t, Name, channeltest.Merge(map[string]any{"enabled": true, "serverUrl": peer.URL(),
		"token": mattermostpeer.Token, "allowFrom": []string{"*"}}, block))
	return &harness{t: t, peer: peer, Run: channeltest.Start(t, env, New)}
}

// sync sends a DM and waits for it: events are handled in order, so every
// event sent before was handled (taken or dropped) too.
func (h *harness) sync() protocol.Inbound {
	h.t.Helper()
	n := len(h.Published())
	id := h.peer.Say(alice, dm, "", "sync")
	got := h.WaitPublished(n + 1)
	require.Equal(h.t, "mattermost:"+id, got[len(got)-1].ID, "the sync message comes last")
	return got[len(got)-1]
}

func TestDirectMessageIsTakenIn(t *testing.T) {
	h := startHarness(t, nil)
	id := h.peer.Say(alice, dm, "", "hello bot")
	got := h.WaitPublished(1)[0]
	require.Equal(t, "hello bot", got.Content)
	require.Equal(t, protocol.Route{Channel: Name, ChatID: dm, SenderID: alice.ID, ReplyTo: id}, got.Route)
	require.False(t, got.Group)
	require.Nil(t, got.Scope, "a top-level DM is the chat's own session")
	require.Equal(t, id, got.Metadata[channels.MetaMessageID])
	require.Equal(t, "@"+mattermostpeer.BotName+" ("+mattermostpeer.BotID+"), groupPolicy mention", h.Ch.Describe())
}

// groupPolicy mention: chatter is left alone; a mention is taken in,
// stripped, and answered in a thread under it that is its own session.
func TestChannelPostsNeedAMention(t *testing.T) {
	h := startHarness(t, nil)
	h.peer.Say(alice, town, "", "just chatting about @"+mattermostpeer.BotName+"s")
	h.peer.Say(alice, town, "", "mail ops@"+mattermostpeer.BotName+" about it")
	id := h.peer.Say(alice, town, "", "@"+mattermostpeer.BotName+" what time is it?")
	got := h.WaitPublished(1)[0]
	require.Equal(t, "what time is it?", got.Content)
	require.True(t, got.Group)
	require.Equal(t, id, got.Route.ThreadID, "replyInThread: the answer goes under the post")
	require.Equal(t, protocol.Within(id), got.Scope)
	h.sync()
	require.Len(t, h.Published(), 2, "the chatter was not taken in")
	require.Contains(t, h.Logs.String(), "not addressed to the bot")
}

// In a thread groupPolicyInThread decides (open here), and the model gets
// the thread's earlier posts once.
func TestThreadRepliesFollowTheirPolicyAndGetContext(t *testing.T) {
	h := startHarness(t, map[string]any{"groupPolicyInThread": "open"})
	root := h.peer.Say(alice, town, "", "the build broke")
	h.peer.Say(alice, town, root, "any idea why?")
	got := h.WaitPublished(1)[0]
	require.Equal(t, "Mattermost thread context before this mention:\n- <"+alice.ID+">: the build broke\n\nCurrent message:\nany idea why?", got.Content)
	require.Equal(t, root, got.Route.ThreadID)
	h.peer.Say(alice, town, root, "still there?")
	require.Equal(t, "still there?", h.WaitPublished(2)[1].Content, "the context is given once per thread")
	require.Len(t, h.Published(), 2, "the top-level post needed a mention")
}

func TestAllowlistAndTeamAndDMSwitches(t *testing.T) {
	h := startHarness(t, map[string]any{"groupPolicy": "allowlist", "groupAllowFrom": []string{private}, "teamId": "otherteam00000000000000000"})
	h.peer.Say(alice, private, "", "in the allowed channel, another team")
	h.sync()
	require.Len(t, h.Published(), 1, "a channel of another team is left alone; DMs always come in")

	h2 := startHarness(t, map[string]any{"groupPolicy": "allowlist", "groupAllowFrom": []string{private}, "dm": map[string]any{"enabled": false}})
	h2.peer.Say(alice, dm, "", "a DM")
	h2.peer.Say(alice, town, "", "@"+mattermostpeer.BotName+" not allowed here")
	id := h2.peer.Say(alice, private, "", "no mention needed")
	require.Equal(t, "mattermost:"+id, h2.WaitPublished(1)[0].ID)
	require.Eventually(t, func() bool { return strings.Contains(h2.Logs.String(), "direct messages are off") }, 5*time.Second, 10*time.Millisecond)
	require.Len(t, h2.Published(), 1)
}

// The bot's own posts and system messages are never taken in; a post
// whose ids are malformed is logged with its id and dropped.
func TestOwnPostsAndBadPayloadsAreDropped(t *testing.T) {
	h := startHarness(t, map[string]any{"groupPolicy": "open"})
	_, err := h.Ch.SendPart(context.Background(), channels.Reply{Route: protocol.Route{ChatID: town}}, channels.Part{Text: "I said this"})
	require.NoError(t, err)
	h.peer.Say(mattermostpeer.User{ID: "short", Username: "mallory"}, town, "", "bad id")
	h.sync()
	require.Len(t, h.Published(), 1)
	require.Contains(t, h.Logs.String(), "the bot's own post")
	require.Contains(t, h.Logs.String(), "an id is missing or malformed")
}

func TestFilesComeInAndGoOut(t *testing.T) {
	h := startHarness(t, nil)
	fid := h.peer.AddFile("notes.txt", []byte("remember the milk"))
	h.peer.Say(alice, dm, "", "see attached", fid)
	got := h.WaitPublished(1)[0]
	require.Len(t, got.Media, 1)
	data, err := os.ReadFile(got.Media[0])
	require.NoError(t, err)
	require.Equal(t, "remember the milk", string(data))
	require.Equal(t, filepath.Join(h.Workspace, "media"), filepath.Dir(got.Media[0]))
	require.Equal(t, "mattermost-"+fid+"-notes.txt", filepath.Base(got.Media[0]), "the file's id and its name")

	require.NoError(t, os.WriteFile(filepath.Join(h.Workspace, "chart.png"), []byte("PNG"), 0o644))
	r := channels.Reply{ID: "t1#a", Route: protocol.Route{Channel: Name, ChatID: dm}, Turn: "t1", Text: "Here.", Media: []string{"chart.png", "missing.pdf"}, Kind: protocol.ReplyAnswer}
	require.NoError(t, channels.Deliver(context.Background(), h.Ch, r))
	posts := h.peer.Posts(dm)
	require.Len(t, posts, 3)
	name, data, ok := h.peer.File(posts[0].FileIDs[0])
	require.True(t, ok)
	require.Equal(t, "chart.png", name)
	require.Equal(t, "PNG", string(data))
	require.Equal(t, "[attachment: missing.pdf - send failed]", posts[1].Message)
	require.Equal(t, "Here.", posts[2].Message)
}

// A reply goes into the thread; an edit patches the post; the done emoji
// goes on the answered message.
func TestRepliesThreadsEditsAndReactions(t *testing.T) {
	h := startHarness(t, nil)
	ctx := context.Background()
	route := protocol.Route{Channel: Name, ChatID: town, ThreadID: "root0000000000000000000000"}
	id, err := h.Ch.SendPart(ctx, channels.Reply{Route: route}, channels.Part{Text: "drawing…", Last: true})
	require.NoError(t, err)
	require.NoError(t, h.Ch.EditMessage(ctx, route, id, "drawn."))
	posts := h.peer.Posts(town)
	require.Equal(t, []string{"drawing…", "drawn."}, posts[0].Drawn)
	require.Equal(t, route.ThreadID, posts[0].RootID)

	user := h.peer.Say(alice, dm, "", "hi")
	require.NoError(t, h.Ch.React(ctx, route, user, h.Ch.AckEmoji()))
	require.NoError(t, h.Ch.Unreact(ctx, route, user, "eyes"))
	h.Ch.ReplyShown(ctx, channels.Reply{Route: route, MessageIDs: []string{"mattermost:" + user}, Kind: protocol.ReplyAnswer})
	require.Equal(t, []string{"+eyes", "-eyes", "+white_check_mark"}, h.peer.Reactions(user))
	require.NoError(t, h.Ch.SendTyping(ctx, route))
	require.Equal(t, 1, h.peer.CallsTo("POST", "/api/v4/users/"+mattermostpeer.BotID+"/typing"))

	err = h.Ch.EditMessage(ctx, route, "gone000000000000000000000x", "x")
	var se *channels.SendError
	require.ErrorAs(t, err, &se)
	require.True(t, se.Permanent, "a post that is gone is not retried")
}

// An approval request asks for a reaction; Alice's ✅ becomes her
// "/approve <id>" in the request's thread, once, and the request says it
// was answered; a reaction on another post is only a reaction.
func TestApprovalIsAnsweredByReaction(t *testing.T) {
	h := startHarness(t, nil)
	ctx := context.Background()
	route := protocol.Route{Channel: Name, ChatID: town, ThreadID: "root0000000000000000000000"}
	req := &protocol.ApprovalRequest{ID: "1a2b", Tool: "exec"}
	r := channels.Reply{ID: "t#q", Route: route, Turn: "t", Text: "Approval needed [1a2b]", Kind: protocol.ReplyApproval, Approval: req}
	require.NoError(t, channels.Deliver(ctx, h.Ch, r))
	asked := h.peer.Posts(town)[0]
	require.Contains(t, asked.Message, "React to answer: :white_check_mark: Approve · :x: Deny")
	require.Equal(t, []string{"+white_check_mark", "+x", "+repeat"}, h.peer.Reactions(asked.ID), "the answers are one click away")

	h.peer.React(alice, h.peer.Say(alice, town, "", "unrelated"), "white_check_mark")
	h.Refuse(bob.ID)
	h.peer.React(bob, asked.ID, "white_check_mark")
	h.sync()
	require.Contains(t, h.peer.Posts(town)[0].Message, "React to answer", "a refused sender's reaction leaves the request open")
	h.peer.React(alice, asked.ID, "white_check_mark")
	h.peer.React(alice, asked.ID, "white_check_mark")
	got := h.WaitPublished(2)
	require.Equal(t, "/approve 1a2b", got[1].Content)
	require.Equal(t, protocol.Route{Channel: Name, ChatID: town, ThreadID: route.ThreadID, SenderID: alice.ID}, got[1].Route)
	require.Equal(t, protocol.Within(route.ThreadID), got[1].Scope)
	require.True(t, got[1].Group)
	require.Eventually(t, func() bool { return strings.HasSuffix(h.peer.Posts(town)[0].Message, "_Answered._") }, 5*time.Second, 10*time.Millisecond)
	h.sync()
	require.Len(t, h.Published(), 3, "the second reaction was not taken in again")
}

// A dropped socket is resumed by connection_id and sequence_number: the
// post made while it was down is replayed and taken in, a redelivered one
// is not taken twice.
func TestDroppedSocketResumesWithNothingLostOrTwice(t *testing.T) {
	h := startHarness(t, nil)
	before := h.sync()
	h.peer.Drop()
	missed := h.peer.Say(alice, dm, "", "while you were away")
	require.Eventually(t, func() bool { all, resumed := h.peer.Connections(); return all == 2 && resumed == 1 }, 20*time.Second, 10*time.Millisecond)
	got := h.WaitPublished(2)
	require.Equal(t, "mattermost:"+missed, got[1].ID)
	h.peer.Redeliver(before.Route.ReplyTo)
	h.sync()
	require.Len(t, h.Published(), 3, "nothing was taken twice")
	require.Contains(t, h.Logs.String(), "mattermost event stream resumed")

	h.peer.Forget()
	h.peer.Drop()
	require.Eventually(t, func() bool { all, _ := h.peer.Connections(); return all == 3 }, 20*time.Second, 10*time.Millisecond)
	h.sync()
	require.Contains(t, h.Logs.String(), "did not resume the event stream")
}

// A post the agent did not take (Temporal down) is released: its
// redelivery is taken in, once.
func TestAPostNotTakenIsTakenInOnRedelivery(t *testing.T) {
	h := startHarness(t, nil)
	h.Down.Store(true)
	id := h.peer.Say(alice, dm, "", "first try fails")
	require.Eventually(t, func() bool { return strings.Contains(h.Logs.String(), "could not be handed to the agent") }, 5*time.Second, 10*time.Millisecond)
	h.Down.Store(false)
	h.peer.Redeliver(id)
	require.Equal(t, "mattermost:"+id, h.WaitPublished(1)[0].ID)
	h.peer.Redeliver(id)
	h.sync()
	require.Len(t, h.Published(), 2, "taken in once")
}

// A refused token fails the start, naming the key; refused on the socket
// it stops the channel, said once, instead of retrying forever.
func TestARefusedTokenStopsTheChannel(t *testing.T) {
	peer := mattermostpeer.New(t)
	ch, err := New(channeltest.NewEnv(t, Name, map[string]any{"enabled": true, "serverUrl": peer.URL(), "token": "wrong"}).Deps)
	require.NoError(t, err)
	require.ErrorContains(t, ch.Start(context.Background(), channeltest.NewPublisher(t).Publish), "mattermost refused channels.mattermost.token")

	h := startHarness(t, nil)
	h.peer.RefuseSocket()
	h.peer.Drop()
	require.Eventually(t, func() bool {
		return strings.Contains(h.Logs.String(), "mattermost stopped: the platform refused the bot")
	}, 10*time.Second, 10*time.Millisecond)
	require.False(t, h.Ch.Connected())
}

// allowFromMatchMode username: the sender is "id|username", which allowFrom
// matches by either part.
func TestAllowFromMatchModeUsername(t *testing.T) {
	h := startHarness(t, map[string]any{"allowFromMatchMode": "username"})
	h.peer.Say(alice, dm, "", "who am I?")
	require.Equal(t, alice.ID+"|alice", h.WaitPublished(1)[0].Route.SenderID)
	require.True(t, channels.AllowFrom{"alice"}.Allows(h.Published()[0].Route.SenderID))
}
