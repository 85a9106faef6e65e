package whatsapp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
	"google.golang.org/protobuf/proto"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/channeltest"
)

// A DM is published with the chat, the sender's phone number and the
// message id to reply to; it gets a read receipt once admitted.
func TestDMIsPublished(t *testing.T) {
	h := startHarness(t, newFake(), nil)
	h.wa.push(dm("M1", alice, "hi there"))
	got := h.WaitPublished(1)[0]
	require.Equal(t, "whatsapp:M1", got.ID)
	require.Equal(t, alice+"@s.whatsapp.net", got.Route.ChatID)
	require.Equal(t, alice, got.Route.SenderID)
	require.Equal(t, "M1", got.Route.ReplyTo)
	require.Equal(t, "hi there", got.Content)
	require.False(t, got.Group)
	require.Eventually(t, func() bool { h.wa.mu.Lock(); defer h.wa.mu.Unlock(); return len(h.wa.reads) == 1 }, time.Second, 5*time.Millisecond)
}

// Extended text (a link preview, a quote) is read like plain text.
func TestExtendedTextIsRead(t *testing.T) {
	h := startHarness(t, newFake(), nil)
	e := dm("M1", alice, "")
	e.Message = &waE2E.Message{ExtendedTextMessage: &waE2E.ExtendedTextMessage{Text: proto.String("see https://example.org")}}
	h.wa.push(e)
	require.Equal(t, "see https://example.org", h.WaitPublished(1)[0].Content)
}

// groupPolicy mention: a group message is taken when it mentions the bot's
// JID (phone or LID) or replies to the bot, not otherwise; open takes all.
func TestGroupPolicyMention(t *testing.T) {
	wa := newFake()
	h := startHarness(t, wa, map[string]any{"groupPolicy": "mention"})
	h.wa.push(groupMsg("G1", group, alice, "just chatting", nil))
	h.wa.push(groupMsg("G2", group, alice, "@15550001111 what time is it",
		&waE2E.ContextInfo{MentionedJID: []string{"15550001111@s.whatsapp.net"}}))
	h.wa.push(groupMsg("G3", group, alice, "@99887766 and you?", &waE2E.ContextInfo{MentionedJID: []string{"99887766@lid"}}))
	h.wa.push(groupMsg("G4", group, alice, "thanks", &waE2E.ContextInfo{StanzaID: proto.String("3EB0X"), Participant: proto.String("15550001111@s.whatsapp.net")}))
	h.wa.push(groupMsg("G5", group, alice, "replying to bob", &waE2E.ContextInfo{StanzaID: proto.String("3EB0Y"), Participant: proto.String(bob + "@s.whatsapp.net")}))
	h.sync()
	got := h.Published()
	require.Len(t, got, 4)
	require.Equal(t, "whatsapp:G2", got[0].ID)
	require.Equal(t, "what time is it", got[0].Content, "the mention is taken out")
	require.True(t, got[0].Group)
	require.Equal(t, group+"@g.us", got[0].Route.ChatID)
	require.Equal(t, alice, got[0].Route.SenderID)
	require.Equal(t, "whatsapp:G3", got[1].ID)
	require.Equal(t, "whatsapp:G4", got[2].ID)
	require.Contains(t, h.Logs.String(), "not addressed to the bot (channels.whatsapp.groupPolicy mention)")
}

func TestGroupPolicyOpen(t *testing.T) {
	h := startHarness(t, newFake(), nil) // nanobot's default: open
	h.wa.push(groupMsg("G1", group, alice, "just chatting", nil))
	require.Equal(t, "whatsapp:G1", h.WaitPublished(1)[0].ID)
}

// Own messages, status updates, edits and messages with nothing to read are skipped.
func TestSkipped(t *testing.T) {
	h := startHarness(t, newFake(), nil)
	own := dm("S1", alice, "from my phone")
	own.Info.IsFromMe = true
	status := dm("S2", alice, "my status")
	status.Info.Chat = types.StatusBroadcastJID
	reaction := dm("S3", alice, "")
	reaction.Message = &waE2E.Message{ReactionMessage: &waE2E.ReactionMessage{Text: proto.String("👍")}}
	edit := dm("S4", alice, "fixed typo")
	edit.IsEdit = true
	for _, e := range []*events.Message{own, status, reaction, edit} {
		h.wa.push(e)
	}
	h.sync()
	require.Len(t, h.Published(), 1)
}

// A message without an id or content is logged with what it had and dropped.
func TestBadMessageDropped(t *testing.T) {
	h := startHarness(t, newFake(), nil)
	h.wa.push(&events.Message{Info: types.MessageInfo{ID: "BAD1"}})
	h.sync()
	require.Len(t, h.Published(), 1)
	require.Contains(t, h.Logs.String(), "message_id=BAD1")
}

// A message whatsmeow hands over again (after a reconnect) is taken in once,
// across a restart too (the set is kept under the nanobot home).
func TestRedeliveredMessageTakenOnce(t *testing.T) {
	h := startHarness(t, newFake(), nil)
	h.wa.push(dm("R1", alice, "once"))
	h.wa.push(dm("R1", alice, "once"))
	h.sync()
	require.Len(t, h.Published(), 2)
	require.Contains(t, h.Logs.String(), "redelivered")
	require.FileExists(t, filepath.Join(h.Home, "channels", "whatsapp-seen.json"))
}

// The loss rule on WhatsApp: a message Temporal did not take is not marked
// taken (an older build marked it on arrival), so its redelivery after a
// restart (the same home) reaches the agent, once.
func TestRefusedPublishIsTakenInAgainAfterARestart(t *testing.T) {
	h := startHarness(t, newFake(), nil)
	h.Down.Store(true)
	h.wa.push(dm("LOST1", alice, "keep me"))
	require.Eventually(t, func() bool { return strings.Contains(h.Logs.String(), "could not be handed to the agent") },
		5*time.Second, 5*time.Millisecond)
	h.Stop()

	wa := newFake()
	again := &harness{Run: channeltest.Start(t, h.Env, onFake(wa), channeltest.NoWait()), wa: wa}
	wa.push(&events.Connected{})
	wa.push(dm("LOST1", alice, "keep me"))
	wa.push(dm("LOST1", alice, "keep me"))
	again.sync()
	got := again.Published()
	require.Len(t, got, 2, "taken once, then the sync")
	require.Equal(t, "whatsapp:LOST1", got[0].ID)
}

// A LID sender is named by the phone number: from SenderAlt, from
// lidMappings, or from whatsmeow's LID store; else by the LID itself.
func TestLIDSenderMappedToPhone(t *testing.T) {
	wa := newFake()
	wa.lidPN["222"] = "15552220000"
	h := startHarness(t, wa, map[string]any{"lidMappings": map[string]string{"111": "+1 555 111 0000"}})
	lid := func(id, user string, alt types.JID) *events.Message {
		j := types.NewJID(user, types.HiddenUserServer)
		e := dm(id, alice, "hi")
		e.Info.Chat, e.Info.Sender, e.Info.SenderAlt = j, j, alt
		return e
	}
	h.wa.push(lid("L1", "111", types.EmptyJID))
	h.wa.push(lid("L2", "222", types.EmptyJID))
	h.wa.push(lid("L3", "333", types.NewJID(alice, types.DefaultUserServer)))
	h.wa.push(lid("L4", "444", types.EmptyJID))
	got := h.WaitPublished(4)
	require.Equal(t, "15551110000", got[0].Route.SenderID)
	require.Equal(t, "15552220000", got[1].Route.SenderID)
	require.Equal(t, alice, got[2].Route.SenderID)
	require.Equal(t, "444@lid", got[3].Route.SenderID)
	require.Equal(t, "111@lid", got[0].Route.ChatID, "the reply goes where the message came from")
}

// The manager admits by allowFrom, written as phone numbers in any spelling.
func TestAllowFromPhoneNumbers(t *testing.T) {
	deps, _ := depsFor(t, map[string]any{"allowFrom": []string{"+1 555 123 4567", "15557654321@s.whatsapp.net", "444@lid"}})
	allow := channels.AllowFromFor(deps.Config, Name)
	require.True(t, allow.Allows(alice))
	require.True(t, allow.Allows(bob))
	require.True(t, allow.Allows("444@lid"))
	require.False(t, allow.Allows("15550009999"))
}

// The answer quotes the user's message (stanza id, participant, content);
// later parts do not; the last clears typing.
func TestReplyQuotesTheMessage(t *testing.T) {
	h := startHarness(t, newFake(), nil)
	h.wa.push(groupMsg("Q1", group, alice, "what is 2+2?", nil))
	in := h.WaitPublished(1)[0]
	r := reply(in.Route.ChatID, in.Route.ReplyTo, in.Route.SenderID, "It is **4**.")
	require.NoError(t, channels.Deliver(context.Background(), h.Ch, r))
	sent := h.wa.sentMessages()
	require.Len(t, sent, 1)
	require.Equal(t, group+"@g.us", sent[0].to.String())
	ext := sent[0].msg.GetExtendedTextMessage()
	require.Equal(t, "It is *4*.", ext.GetText(), "Markdown as WhatsApp's marks")
	ci := ext.GetContextInfo()
	require.Equal(t, "Q1", ci.GetStanzaID())
	require.Equal(t, alice+"@s.whatsapp.net", ci.GetParticipant())
	require.Equal(t, "what is 2+2?", ci.GetQuotedMessage().GetConversation())
	require.Contains(t, h.wa.presences(), "paused "+group+"@g.us")
}

// A reply to a message no longer remembered still quotes it by id and sender.
func TestReplyQuotesByIDAfterRestart(t *testing.T) {
	h := startHarness(t, newFake(), nil)
	require.NoError(t, channels.Deliver(context.Background(), h.Ch, reply(group+"@g.us", "OLD1", alice, "late answer")))
	ci := h.wa.sentMessages()[0].msg.GetExtendedTextMessage().GetContextInfo()
	require.Equal(t, "OLD1", ci.GetStanzaID())
	require.Equal(t, alice+"@s.whatsapp.net", ci.GetParticipant())
	require.NoError(t, channels.Deliver(context.Background(), h.Ch, reply(alice+"@s.whatsapp.net", "", alice, "no quote")))
	require.Equal(t, "no quote", h.wa.sentMessages()[1].msg.GetConversation())
}

// A long reply is split at MaxLength; only the first part quotes.
func TestLongReplySplit(t *testing.T) {
	h := startHarness(t, newFake(), nil)
	long := ""
	for len([]rune(long)) < maxMessageRunes+500 {
		long += "word after word after word. "
	}
	require.NoError(t, channels.Deliver(context.Background(), h.Ch, reply(alice+"@s.whatsapp.net", "M1", alice, long)))
	sent := h.wa.sentMessages()
	require.Len(t, sent, 2)
	require.NotNil(t, sent[0].msg.GetExtendedTextMessage().GetContextInfo())
	require.LessOrEqual(t, len([]rune(sent[0].msg.GetExtendedTextMessage().GetText())), maxMessageRunes)
	require.NotEmpty(t, sent[1].msg.GetConversation())
}

// An image is downloaded into the workspace after admission; a voice note
// is saved as .ogg (audio/ogg) for transcription; a document keeps its name.
func TestMediaIn(t *testing.T) {
	h := startHarness(t, newFake(), nil)
	h.wa.files["/v/img"], h.wa.files["/v/ptt"], h.wa.files["/v/doc"] = []byte("JPEGDATA"), []byte("OggS"), []byte("%PDF")
	img := dm("I1", alice, "")
	img.Message = &waE2E.Message{ImageMessage: &waE2E.ImageMessage{DirectPath: proto.String("/v/img"), Mimetype: proto.String("image/jpeg"), Caption: proto.String("look")}}
	voice := dm("V1", alice, "")
	voice.Message = &waE2E.Message{AudioMessage: &waE2E.AudioMessage{DirectPath: proto.String("/v/ptt"), Mimetype: proto.String("audio/ogg; codecs=opus"), PTT: proto.Bool(true)}}
	doc := dm("D1", alice, "")
	doc.Message = &waE2E.Message{DocumentMessage: &waE2E.DocumentMessage{DirectPath: proto.String("/v/doc"), Mimetype: proto.String("application/pdf"), FileName: proto.String("report.pdf")}}
	gone := dm("X1", alice, "")
	gone.Message = &waE2E.Message{ImageMessage: &waE2E.ImageMessage{DirectPath: proto.String("/v/missing")}}
	for _, e := range []*events.Message{img, voice, doc, gone} {
		h.wa.push(e)
	}
	got := h.WaitPublished(4)
	require.Equal(t, "look", got[0].Content)
	require.Len(t, got[0].Media, 1)
	require.Equal(t, ".jpg", filepath.Ext(got[0].Media[0]))
	data, err := os.ReadFile(got[0].Media[0])
	require.NoError(t, err)
	require.Equal(t, "JPEGDATA", string(data))
	require.Len(t, got[1].Media, 1)
	require.Equal(t, ".ogg", filepath.Ext(got[1].Media[0]), "a voice note is kept as Ogg for transcription")
	require.Equal(t, "[voice]", got[1].Content)
	require.Equal(t, "whatsapp-D1-report.pdf", filepath.Base(got[2].Media[0]))
	require.Empty(t, got[3].Media)
	require.Equal(t, "[image: download failed]", got[3].Content)
}

// Files the model sends are uploaded: an image as an image message, a PDF
// as a document with its name; a missing file becomes a line saying so.
func TestMediaOut(t *testing.T) {
	h := startHarness(t, newFake(), nil)
	png := []byte("\x89PNG\r\n\x1a\n0000")
	require.NoError(t, os.WriteFile(filepath.Join(h.Ch.workspace, "chart.png"), png, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(h.Ch.workspace, "notes.pdf"), []byte("%PDF-1.4"), 0o644))
	r := reply(alice+"@s.whatsapp.net", "M1", alice, "here")
	r.Media = []string{"chart.png", "notes.pdf", "missing.txt"}
	require.NoError(t, channels.Deliver(context.Background(), h.Ch, r))
	sent := h.wa.sentMessages()
	require.Len(t, sent, 4)
	im := sent[0].msg.GetImageMessage()
	require.NotNil(t, im)
	require.Equal(t, "image/png", im.GetMimetype())
	require.Equal(t, "/v/x", im.GetDirectPath())
	require.Equal(t, "M1", im.GetContextInfo().GetStanzaID(), "the first part quotes")
	require.Equal(t, "notes.pdf", sent[1].msg.GetDocumentMessage().GetFileName())
	require.Equal(t, "[attachment: missing.txt - send failed]", sent[2].msg.GetConversation())
	require.Equal(t, "here", sent[3].msg.GetConversation())
	require.Equal(t, []whatsmeow.MediaType{whatsmeow.MediaImage, whatsmeow.MediaDocument}, h.wa.uploads)
}

// Typing is chat presence composing.
func TestTyping(t *testing.T) {
	h := startHarness(t, newFake(), nil)
	require.NoError(t, h.Ch.SendTyping(context.Background(), reply(alice, "", alice, "").Route))
	require.Equal(t, []string{"composing " + alice + "@s.whatsapp.net"}, h.wa.presences())
}

// WhatsApp's rate-overlimit waits; a chat that is no JID is permanent; a
// dropped connection is retried.
func TestSendErrors(t *testing.T) {
	h := startHarness(t, newFake(), nil)
	part := channels.Part{Text: "x", Last: true}
	h.wa.sendErr = whatsmeow.ErrIQRateOverLimit
	_, err := h.Ch.SendPart(context.Background(), reply(alice, "", alice, "x"), part)
	var se *channels.SendError
	require.ErrorAs(t, err, &se)
	require.Equal(t, rateLimitWait, se.RetryAfter)
	h.wa.sendErr = whatsmeow.ErrNotConnected
	_, err = h.Ch.SendPart(context.Background(), reply(alice, "", alice, "x"), part)
	require.Error(t, err)
	require.NotErrorAs(t, err, &se)
	_, err = h.Ch.SendPart(context.Background(), reply("not a chat!", "", alice, "x"), part)
	require.ErrorAs(t, err, &se)
	require.True(t, se.Permanent)
}

// Connected follows whatsmeow's Connected and Disconnected events.
func TestConnectedFollowsEvents(t *testing.T) {
	h := startDown(t, newFake(), nil)
	require.False(t, h.Ch.Connected())
	h.wa.push(&events.Connected{})
	require.Eventually(t, h.Ch.Connected, time.Second, 5*time.Millisecond)
	require.Contains(t, h.Ch.Describe(), "+15550001111")
	h.wa.push(&events.Disconnected{})
	require.Eventually(t, func() bool { return !h.Ch.Connected() }, time.Second, 5*time.Millisecond)
	h.wa.push(&events.Connected{})
	require.Eventually(t, h.Ch.Connected, time.Second, 5*time.Millisecond)
}

// A first Connect that fails is retried with backoff.
func TestConnectRetried(t *testing.T) {
	wa := newFake()
	wa.failConn = 1
	h := startDown(t, wa, nil)
	require.Eventually(t, func() bool { wa.mu.Lock(); defer wa.mu.Unlock(); return wa.connects == 2 }, 5*time.Second, 10*time.Millisecond)
	require.Contains(t, h.Logs.String(), "retrying")
}

// A device logged out from the phone: the channel says how to pair again,
// stays down, closes the store and never connects again.
func TestLoggedOutStaysDown(t *testing.T) {
	h := startHarness(t, newFake(), nil)
	h.wa.push(&events.LoggedOut{OnConnect: true, Reason: events.ConnectFailureLoggedOut})
	require.Eventually(t, h.wa.isClosed, time.Second, 5*time.Millisecond)
	require.False(t, h.Ch.Connected())
	require.Contains(t, h.Logs.String(), "nanobot channels login whatsapp")
	require.Contains(t, h.Ch.Describe(), "logged out")
	h.wa.mu.Lock()
	connects := h.wa.connects
	h.wa.mu.Unlock()
	require.Equal(t, 1, connects, "no reconnect after a logout")
	_, err := h.Ch.SendPart(context.Background(), reply(alice, "", alice, "x"), channels.Part{Text: "x"})
	require.ErrorContains(t, err, "nanobot channels login whatsapp")
}

// No device stored: Start succeeds (the gateway goes on), the channel is
// down and says to run the login.
func TestNotPairedStartsDown(t *testing.T) {
	wa := newFake()
	wa.paired = false
	h := startDown(t, wa, nil)
	require.False(t, h.Ch.Connected())
	require.Contains(t, h.Ch.Describe(), "nanobot channels login whatsapp")
	require.Contains(t, h.Logs.String(), "nanobot channels login whatsapp")
	require.True(t, wa.isClosed())
	require.Zero(t, wa.connects)
}
