//go:build goolm

package matrix

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"maunium.net/go/mautrix/crypto/attachment"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/channeltest"
	"github.com/nanobot-durable/nanobot/channels/matrix/dendritepeer"
	"github.com/nanobot-durable/nanobot/channels/matrix/dendritepeer/e2eeclient"
	"github.com/nanobot-durable/nanobot/protocol"
)

// encryptedBadLog is what a bogus m.room.encrypted event is logged as:
// this build tries to decrypt it.
const encryptedBadLog = "matrix encrypted event dropped"

// TestEncryptedDM: a user whose client encrypts (as Element does) opens
// an encrypted DM with the bot; the bot reads the message, and its reply
// and the reply's edit go out encrypted and decrypt to the text sent. After
// a restart on the same nanobot home the bot is the same device: the
// user's session still reaches it and the second reply is encrypted too.
func TestEncryptedDM(t *testing.T) {
	h := startHarness(t, nil) // e2eeEnabled: nanobot's default, true
	alice, room := encryptedDM(h)

	sent, _ := alice.SendText(room, "hello, encrypted")
	in := h.waitInbound(1)[0]
	require.Equal(t, "hello, encrypted", in.Content)
	require.Equal(t, string(sent), in.Route.ReplyTo)
	require.False(t, in.Group, "a room of two is a DM")

	h.answer(in, "turn-1", "**hi** back")
	reply := alice.WaitFrom(h.bot, 1)
	content := reply.Content.AsMessage()
	require.Equal(t, "**hi** back", content.Body)
	require.Equal(t, toHTML("**hi** back"), content.FormattedBody)
	require.Equal(t, sent, content.RelatesTo.GetReplyTo(), "the reply answers the user's event")
	require.Empty(t, dendritepeer.From(h.alice.Messages(t, string(room)), h.bot), "nothing from the bot in the clear")

	route := protocol.Route{Channel: Name, ChatID: string(room)}
	require.NoError(t, h.ch.EditMessage(context.Background(), route, string(reply.ID), "edited"))
	edit := alice.WaitFrom(h.bot, 2).Content.AsMessage()
	require.Equal(t, event.RelReplace, edit.RelatesTo.Type)
	require.Equal(t, reply.ID, edit.RelatesTo.GetReplaceID())
	require.Equal(t, "edited", edit.NewContent.Body)

	info, err := os.Stat(h.ch.statePath(cryptoFile))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "the device's keys are the user's alone")

	h.stop()
	h.start()
	h.waitLog("matrix end-to-end encryption on", "device="+h.bot.DeviceID)
	alice.SendText(room, "after the restart")
	in = h.waitInbound(2)[1]
	require.Equal(t, "after the restart", in.Content, "the restarted bot decrypts with the keys it kept")
	h.answer(in, "turn-2", "still here")
	require.Equal(t, "still here", alice.WaitFrom(h.bot, 3).Content.AsMessage().Body)
	require.Equal(t, 1, countLines(h.env.Logs.String(), "device keys uploaded"), "the restart kept the device's keys")
}

// TestMessageWithoutItsKey: a message whose room key never reached the
// bot is logged once with its event id and session, the key is asked
// for from the sender's devices, and the message is not answered; the
// next readable one is.
func TestMessageWithoutItsKey(t *testing.T) {
	h := startHarness(t, nil)
	alice, room := encryptedDM(h)

	hidden, session := alice.SendText(room, "not for the bot", id.UserID(h.alice.ID)) // the key stays with alice
	h.waitLog("matrix encrypted message not decrypted", "event_id="+string(hidden), "session_id="+string(session))
	require.Eventually(t, func() bool { return alice.AskedFor(session) }, defaultWait, pollEvery,
		"the bot never asked alice's devices for the key")

	readable := h.alice.SendText(t, string(room), "in the clear")
	got := h.waitInbound(1)
	require.Equal(t, readable, got[0].Route.ReplyTo, "the message without its key was not answered")
}

// TestEncryptedFiles: in an encrypted room a file comes in encrypted (its
// key in the encrypted event) and is saved decrypted for the model; a
// file the bot sends is encrypted before it is uploaded.
func TestEncryptedFiles(t *testing.T) {
	h := startHarness(t, nil)
	alice, room := encryptedDM(h)

	data := pngBytes(t)
	file := attachment.NewEncryptedFile()
	sealed := file.Encrypt(data)
	mxc := h.alice.Upload(t, sealed, "application/octet-stream", "")
	alice.Send(room, &event.MessageEventContent{MsgType: event.MsgImage, Body: "cat.png",
		Info: &event.FileInfo{MimeType: "image/png", Size: len(data)},
		File: &event.EncryptedFileInfo{EncryptedFile: *file, URL: id.ContentURIString(mxc)}})
	in := h.waitInbound(1)[0]
	require.Equal(t, "[image: cat.png]", in.Content)
	require.Len(t, in.Media, 1)
	got, err := os.ReadFile(in.Media[0])
	require.NoError(t, err)
	require.Equal(t, data, got, "saved decrypted")

	report := filepath.Join(h.env.Workspace, "report.txt")
	require.NoError(t, os.WriteFile(report, []byte("the report"), 0o600))
	h.answer(in, "turn-1", "here it is", report)
	var shown *event.MessageEventContent
	for n := 1; shown == nil; n++ {
		if c := alice.WaitFrom(h.bot, n).Content.AsMessage(); c.MsgType == event.MsgFile {
			shown = c
		}
	}
	require.Equal(t, "report.txt", shown.Body)
	require.Empty(t, shown.URL, "no clear URL in an encrypted room")
	require.NotNil(t, shown.File)
	stored := h.alice.Download(t, string(shown.File.URL))
	require.NotEqual(t, "the report", string(stored), "the content repository holds ciphertext")
	plain, err := shown.File.DecryptInPlaceReturn(stored)
	require.NoError(t, err)
	require.Equal(t, "the report", string(plain))
}

// TestStartAfterStopReopensTheStore: Stop closes the crypto store; the
// same channel started again opens it again rather than using it closed.
func TestStartAfterStopReopensTheStore(t *testing.T) {
	h := startHarness(t, nil)
	alice, room := encryptedDM(h)
	h.stop()
	again := channeltest.NewPublisher(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	require.NoError(t, h.ch.Start(ctx, again.Publish))
	defer func() { require.NoError(t, h.ch.Stop(context.Background())) }()
	alice.SendText(room, "after a stop and a start")
	require.Equal(t, "after a stop and a start", again.WaitPublished(1)[0].Content)
}

// TestLostStoreTurnsEncryptionOff: a store deleted while its device lives
// on cannot serve that device (the homeserver has keys the new store did
// not make): encryption is turned off with an error line that says what
// to do, an encrypted room is skipped with a line that points to it, and
// plain rooms are still answered.
func TestLostStoreTurnsEncryptionOff(t *testing.T) {
	h := startHarness(t, nil)
	alice, room := encryptedDM(h)
	h.stop()
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(h.ch.statePath(cryptoFile) + suffix); !errors.Is(err, os.ErrNotExist) {
			require.NoError(t, err)
		}
	}
	h.start()
	h.waitLog("matrix end-to-end encryption off", "already has keys on the homeserver")
	sealed, _ := alice.SendText(room, "unreadable now")
	h.waitLog("matrix encrypted room skipped: end-to-end encryption did not start", "event_id="+string(sealed))
	plain := h.dm(h.alice)
	h.alice.SendText(t, plain, "in a plain room")
	require.Equal(t, "in a plain room", h.waitInbound(1)[0].Content)
}

// TestLongestPartFitsOneEncryptedEvent: a part of MaxMessageRunes of the
// widest runes still fits one event once encrypted (Megolm's base64 makes
// it a third bigger), as an event and as an edit.
func TestLongestPartFitsOneEncryptedEvent(t *testing.T) {
	h := startHarness(t, nil)
	alice, room := encryptedDM(h)
	alice.SendText(room, "write me a long one") // the bot answers a room it has read, as a reply does
	require.Equal(t, "write me a long one", h.waitInbound(1)[0].Content)
	text := "**" + strings.Repeat("😀", MaxMessageRunes-4) + "**"
	route := protocol.Route{Channel: Name, ChatID: string(room)}
	eventID, err := h.ch.SendPart(context.Background(), channels.Reply{Route: route}, channels.Part{Text: text})
	require.NoError(t, err)
	require.Equal(t, text, alice.WaitFrom(h.bot, 1).Content.AsMessage().Body)
	require.NoError(t, h.ch.EditMessage(context.Background(), route, eventID, text))
	require.Equal(t, text, alice.WaitFrom(h.bot, 2).Content.AsMessage().NewContent.Body)
}

// encryptedDM is alice with an encrypting client and the encrypted DM she
// opened with the bot, joined by it.
func encryptedDM(h *harness) (*e2eeclient.Client, id.RoomID) {
	h.t.Helper()
	alice := e2eeclient.New(h.t, h.hs, h.alice)
	room := alice.CreateEncryptedDM(h.bot)
	require.Eventually(h.t, func() bool { return h.alice.Joined(h.t, string(room), h.bot) }, defaultWait, pollEvery,
		"the bot did not join the encrypted DM")
	return alice, room
}
