package whatsapp

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"google.golang.org/protobuf/proto"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/protocol"
)

// maxMessageRunes is where a reply is split: WhatsApp takes 65536
// characters, but a message that long is unreadable on a phone.
const maxMessageRunes = 4096

// rateLimitWait is how long delivery waits after WhatsApp's rate-overlimit (it names no time).
const rateLimitWait = 30 * time.Second

// MaxLength implements channels.PartSender.
func (c *Channel) MaxLength() int { return maxMessageRunes }

// SendPart implements channels.PartSender: a file uploaded (a URL sent as
// a link), a piece of text sent. The reply's first part quotes the user's
// message; the last clears "typing…".
func (c *Channel) SendPart(ctx context.Context, r channels.Reply, p channels.Part) (string, error) {
	client, err := c.current()
	if err != nil {
		return "", &channels.SendError{Err: err, RetryAfter: time.Minute}
	}
	to, ok := parseChat(r.Route.ChatID)
	if !ok {
		return "", &channels.SendError{Err: fmt.Errorf("whatsapp chat %q is not a JID", r.Route.ChatID), Permanent: true}
	}
	var ci *waE2E.ContextInfo
	if p.Index == 0 {
		ci = c.quote(to, r.Route)
	}
	cctx, cancel := context.WithTimeout(ctx, 2*callTimeout)
	defer cancel()
	var msg *waE2E.Message
	if p.Media != "" {
		msg = c.fileMessage(cctx, client, p.Media, ci)
	} else {
		msg = textMessage(format.Markdown(p.Text), ci)
	}
	id, err := client.Send(cctx, to, msg)
	if err != nil {
		return "", sendError(err)
	}
	if p.Last {
		if err := client.ChatPresence(cctx, to, false); err != nil {
			c.Log.Debug("whatsapp typing not cleared", "chat", r.Route.ChatID, "error", err)
		}
	}
	return id, nil
}

// textMessage is a plain conversation, or an extended text when it quotes.
func textMessage(text string, ci *waE2E.ContextInfo) *waE2E.Message {
	if ci == nil {
		return &waE2E.Message{Conversation: proto.String(text)}
	}
	return &waE2E.Message{ExtendedTextMessage: &waE2E.ExtendedTextMessage{Text: proto.String(text), ContextInfo: ci}}
}

// fileMessage uploads a workspace file; a URL goes as a link. A file that
// is missing, too large or refused becomes a line saying so, as in
// nanobot, rather than failing the whole reply again and again.
func (c *Channel) fileMessage(ctx context.Context, client waClient, ref string, ci *waE2E.ContextInfo) *waE2E.Message {
	if channels.IsLink(ref) {
		return textMessage(ref, ci)
	}
	path := channels.WorkspacePath(c.workspace, ref)
	msg, err := c.mediaMessage(ctx, client, path, ci)
	if err != nil {
		c.Log.Warn("whatsapp attachment not sent", "file", path, "error", err)
		return textMessage(channels.FileNote(filepath.Base(path), "send failed"), ci)
	}
	return msg
}

// quote points a reply at the user's message: its id, who wrote it, and
// (while remembered) its content, which WhatsApp shows above the reply.
func (c *Channel) quote(chat types.JID, route protocol.Route) *waE2E.ContextInfo {
	if route.ReplyTo == "" {
		return nil
	}
	ci := &waE2E.ContextInfo{StanzaID: proto.String(route.ReplyTo)}
	if q, ok := c.quotes.get(route.ReplyTo); ok {
		ci.Participant, ci.QuotedMessage = proto.String(q.participant.String()), q.message
		return ci
	}
	switch {
	case chat.Server != types.GroupServer:
		ci.Participant = proto.String(chat.String())
	case route.SenderID != "":
		if j, ok := parseChat(route.SenderID); ok {
			ci.Participant = proto.String(j.String())
		}
	}
	ci.QuotedMessage = &waE2E.Message{Conversation: proto.String("")}
	return ci
}

// SendTyping implements channels.Typer: "typing…" (chat presence composing).
func (c *Channel) SendTyping(ctx context.Context, route protocol.Route) error {
	client, err := c.current()
	if err != nil {
		return err
	}
	to, ok := parseChat(route.ChatID)
	if !ok {
		return fmt.Errorf("whatsapp chat %q is not a JID", route.ChatID)
	}
	return client.ChatPresence(ctx, to, true)
}

// sendError tells delivery what a failed send means: WhatsApp's
// rate-overlimit waits, a recipient it cannot address is permanent, a
// dropped connection is retried.
func sendError(err error) error {
	var iq *whatsmeow.IQError
	switch {
	case errors.Is(err, whatsmeow.ErrIQRateOverLimit), errors.As(err, &iq) && iq.Code == 429,
		errors.Is(err, whatsmeow.ErrServerReturnedError) && strings.HasSuffix(err.Error(), " 429"):
		return &channels.SendError{Err: fmt.Errorf("whatsapp send: %w", err), RetryAfter: rateLimitWait}
	case errors.Is(err, whatsmeow.ErrUnknownServer), errors.Is(err, whatsmeow.ErrRecipientADJID),
		errors.Is(err, whatsmeow.ErrBroadcastListUnsupported):
		return &channels.SendError{Err: fmt.Errorf("whatsapp send: %w", err), Permanent: true}
	}
	return fmt.Errorf("whatsapp send: %w", err)
}
