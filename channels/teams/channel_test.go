package teams

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/channeltest"
	"github.com/nanobot-durable/nanobot/channels/jwks"
	"github.com/nanobot-durable/nanobot/channels/teams/teamspeer"
	"github.com/nanobot-durable/nanobot/protocol"
)

var alice = teamspeer.User{ID: "29:alice", AADObjectID: "aad-alice", Name: "Alice"}

// start runs the channel against the peer; over are more of its block.
func start(t *testing.T, peer *teamspeer.Peer, over map[string]any, opts ...channeltest.Option) *channeltest.Run[*Channel] {
	t.Helper()
	env := channeltest.NewEnv(t, Name, channeltest.Merge(map[string]any{"enabled": true, "appId": teamspeer.AppID,
		"appPassword": teamspeer.AppPassword, "port": 0, "openIdMetadata": peer.OpenIDMetadata(), "tokenEndpoint": peer.TokenEndpoint(),
		"trustedServiceUrlHosts": []string{"127.0.0.1"}}, over))
	run := channeltest.Start(t, env, New, opts...)
	peer.SetEndpoint("http://" + run.Ch.endpoint.Addr() + "/api/messages")
	return run
}

// TestTokenIsChecked: only an activity whose JWT the connector's key
// signed, for this app and not expired, gets in; the others are 401.
func TestTokenIsChecked(t *testing.T) {
	peer := teamspeer.New(t)
	pub := start(t, peer, nil)
	for _, s := range []teamspeer.Signing{teamspeer.Forged, teamspeer.Expired, teamspeer.WrongAudience} {
		status, _ := peer.Post(peer.Message(teamspeer.Personal, "a:dm", alice, "let me in", false), s)
		require.Equal(t, http.StatusUnauthorized, status, "signing %d", s)
	}
	status, _ := peer.Post(peer.Message(teamspeer.Personal, "a:dm", alice, "hello", false), teamspeer.Valid)
	require.Equal(t, http.StatusOK, status)
	got := pub.Published()
	require.Len(t, got, 1, "only the well-signed activity got in")
	require.Equal(t, "hello", got[0].Content)
	require.Equal(t, protocol.Route{Channel: Name, ChatID: "a:dm", SenderID: "aad-alice", ReplyTo: got[0].Metadata[channels.MetaMessageID]}, got[0].Route)
	require.False(t, got[0].Group)
}

// TestTokenMustNameTheServiceURL: a token the connector issued for one
// serviceUrl does not carry an activity that names another.
func TestTokenMustNameTheServiceURL(t *testing.T) {
	peer := teamspeer.New(t)
	v := &verifier{keys: &jwks.Keys{Metadata: peer.OpenIDMetadata(), API: &channels.API{Name: Name, HTTP: http.DefaultClient}}, appID: teamspeer.AppID}
	require.NoError(t, v.check(context.Background(), peer.BearerFor(peer.URL(), teamspeer.Valid), peer.URL()))
	require.ErrorContains(t, v.check(context.Background(), peer.BearerFor(peer.URL(), teamspeer.Valid), "https://elsewhere.example/"), "serviceUrl")
	require.ErrorContains(t, v.check(context.Background(), "", peer.URL()), "no bearer token")
}

// TestGroupNeedsMention: in a channel only a mention is taken, without its <at>.
func TestGroupNeedsMention(t *testing.T) {
	peer := teamspeer.New(t)
	pub := start(t, peer, nil)
	const thread = "19:general@thread.tacv2;messageid=1700"
	status, _ := peer.Post(peer.Message(teamspeer.Channel, thread, alice, "just chatting", false), teamspeer.Valid)
	require.Equal(t, http.StatusOK, status)
	status, _ = peer.Post(peer.Message(teamspeer.Channel, thread, alice, "what &amp; why?", true), teamspeer.Valid)
	require.Equal(t, http.StatusOK, status)
	got := pub.Published()
	require.Len(t, got, 1)
	require.Equal(t, "what & why?", got[0].Content)
	require.True(t, got[0].Group)
	require.Equal(t, protocol.Thread("19:general@thread.tacv2", "1700"), got[0].Scope)
}

// TestUntrustedServiceURLDropped: a reply would carry the bot's token
// there, so the activity is not taken.
func TestUntrustedServiceURLDropped(t *testing.T) {
	peer := teamspeer.New(t)
	pub := start(t, peer, map[string]any{"validateInboundAuth": false})
	a := peer.Message(teamspeer.Personal, "a:dm", alice, "hello", false)
	a["serviceUrl"] = "http://127.0.0.2:9/"
	status, _ := peer.Post(a, teamspeer.Valid)
	require.Equal(t, http.StatusOK, status)
	require.Empty(t, pub.Published())
}

// TestNotTakenIsTakenAgain: an activity Temporal did not take answers 500;
// the connector's redelivery, to the restarted gateway, gets in once.
func TestNotTakenIsTakenAgain(t *testing.T) {
	peer := teamspeer.New(t)
	run := start(t, peer, nil)
	run.Down.Store(true)
	a := peer.Message(teamspeer.Personal, "a:dm", alice, "hello", false)
	status, _ := peer.Post(a, teamspeer.Valid)
	require.Equal(t, http.StatusInternalServerError, status)
	run.Stop()

	again := channeltest.Start(t, run.Env, New)
	peer.SetEndpoint("http://" + again.Ch.endpoint.Addr() + "/api/messages")
	for range 2 {
		status, _ = peer.Post(a, teamspeer.Valid)
		require.Equal(t, http.StatusOK, status)
	}
	require.Len(t, again.Published(), 1, "taken in once, the redelivery after it left alone")
	require.Empty(t, run.Published())
}

// TestRepliesAndApprovalCard: replies go through the connector with one
// cached AAD token; an approval carries an Adaptive Card whose press comes
// back as the presser's command, and the card loses its buttons.
func TestRepliesAndApprovalCard(t *testing.T) {
	peer := teamspeer.New(t)
	pub := start(t, peer, nil)
	c := pub.Ch
	status, _ := peer.Post(peer.Message(teamspeer.Personal, "a:dm", alice, "hello", false), teamspeer.Valid)
	require.Equal(t, http.StatusOK, status)
	route := pub.WaitPublished(1)[0].Route
	ctx := context.Background()
	require.NoError(t, channels.Deliver(ctx, c, channels.Reply{Route: route, Text: "**Hi** Alice"}))
	id, err := c.SendPart(ctx, channels.Reply{Route: route}, channels.Part{Index: 1, Text: "draft", Last: true})
	require.NoError(t, err)
	require.NoError(t, c.EditMessage(ctx, route, id, "final"))
	req := protocol.ApprovalRequest{ID: "1a2b", Once: true}
	require.NoError(t, channels.Deliver(ctx, c, channels.Reply{Route: route, Text: "Approval needed [1a2b]", Kind: protocol.ReplyApproval, Approval: &req}))

	sent := peer.Sent("a:dm")
	require.Len(t, sent, 3)
	require.Equal(t, "**Hi** Alice", sent[0].Text)
	require.Equal(t, route.ReplyTo, sent[0].ReplyToID, "the answer replies to the user's message")
	require.Equal(t, "final", sent[1].Text)
	require.Equal(t, 1, sent[1].Edits)
	require.Contains(t, sent[2].Attachments, `"Action.Submit"`)
	require.Contains(t, sent[2].Attachments, `"nanobot":"/approve 1a2b"`)
	require.Equal(t, 1, peer.TokensIssued(), "the AAD token is cached")
	peer.RevokeTokens()
	err = c.EditMessage(ctx, route, id, "refused")
	var se *channels.SendError
	require.ErrorAs(t, err, &se)
	require.False(t, se.Permanent, "a refused token is fetched anew on the next attempt")
	require.NoError(t, c.EditMessage(ctx, route, id, "final"))
	require.Equal(t, 2, peer.TokensIssued())

	status, _ = peer.Post(peer.Submit(teamspeer.Personal, "a:dm", alice, sent[2], map[string]any{"nanobot": "/approve 1a2b"}), teamspeer.Valid)
	require.Equal(t, http.StatusOK, status)
	press := pub.WaitPublished(2)[1]
	require.Equal(t, "/approve 1a2b", press.Content)
	require.Equal(t, "aad-alice", press.Route.SenderID)
	require.Eventually(t, func() bool { return peer.Sent("a:dm")[2].Attachments == "" }, 5*time.Second, 10*time.Millisecond, "the buttons are gone")
	require.True(t, strings.HasPrefix(peer.Sent("a:dm")[2].Text, "Answered by Alice"))

	status, _ = peer.Post(peer.Submit(teamspeer.Personal, "a:dm", alice, sent[2], map[string]any{"nanobot": "rm -rf /"}), teamspeer.Valid)
	require.Equal(t, http.StatusOK, status)
	require.Len(t, pub.Published(), 2, "a card value that is no approval command is not a message")
}
