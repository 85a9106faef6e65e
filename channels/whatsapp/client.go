package whatsapp

import (
	"context"
	"errors"
	"log/slog"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
)

// waClient is the seam between this channel and whatsmeow. WhatsApp's
// servers cannot be reached from tests, and faking its Noise handshake and
// Signal sessions is out of reach, so this is the one place the wire is
// not exercised: whatsmeow.go is the real implementation (and the only
// file that calls whatsmeow's client), and the tests run the channel
// against a fake of this interface. Messages and events are whatsmeow's
// own types (waE2E protos, types.JID, *events.Message, …), so what the
// channel reads and builds is what whatsmeow hands over and sends.
type waClient interface {
	// Paired tells whether the store holds a logged-in device.
	Paired() bool
	// Self is the bot's account: its phone JID and, once known, its LID.
	Self() (pn, lid types.JID)
	// Connect opens the connection; whatsmeow reconnects after a drop.
	Connect(ctx context.Context) error
	Disconnect()
	// Events are whatsmeow's events, in order (*events.Message,
	// *events.Connected, *events.Disconnected, *events.LoggedOut, …);
	// closed by Close.
	Events() <-chan any
	// QR starts a login: call before Connect; items are QR codes, then
	// "success", "timeout" or an error.
	QR(ctx context.Context) (<-chan whatsmeow.QRChannelItem, error)
	// PairPhone asks for a pairing code for phone (after Connect and the
	// first QR item), the one the user types on the phone.
	PairPhone(ctx context.Context, phone string) (string, error)
	// Send sends one message and returns its id.
	Send(ctx context.Context, to types.JID, msg *waE2E.Message) (string, error)
	// Upload encrypts and uploads a file for a media message.
	Upload(ctx context.Context, data []byte, kind whatsmeow.MediaType) (whatsmeow.UploadResponse, error)
	// Download fetches and decrypts a media message's file.
	Download(ctx context.Context, msg whatsmeow.DownloadableMessage) ([]byte, error)
	// ChatPresence shows (composing) or clears "typing…" in a chat.
	ChatPresence(ctx context.Context, chat types.JID, composing bool) error
	// MarkRead sends the read receipt (blue ticks) for a message.
	MarkRead(ctx context.Context, id types.MessageID, chat, sender types.JID) error
	// PhoneForLID is the phone JID whatsmeow learnt for a LID (empty if none).
	PhoneForLID(ctx context.Context, lid types.JID) (types.JID, error)
	// Unpair forgets the stored device (a new login follows).
	Unpair(ctx context.Context) error
	// Close disconnects and closes the store.
	Close() error
}

// openClient opens the device store at a path and wraps a client around
// it; the channel and the login call it, tests replace it.
type openClient func(ctx context.Context, path string, log *slog.Logger) (waClient, error)

// errNotPaired: no device is stored; only an interactive login makes one.
var errNotPaired = errors.New("no WhatsApp device is paired: run `nanobot channels login whatsapp`")
