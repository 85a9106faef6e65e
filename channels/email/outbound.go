package email

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/mail"
	"strings"
	"time"

	"github.com/nanobot-durable/nanobot/channels"
)

// MaxLength implements channels.PartSender: mail has no limit to speak
// of, so a reply is one mail.
func (c *Channel) MaxLength() int { return MaxLength }

// SendPart implements channels.PartSender: each text part is one mail to
// the chat's address, threaded under the mail it answers; the reply's
// files ride on its first text mail (a reply of files only is one mail
// carrying them). With autoReplyEnabled off, nothing goes back to the
// sender of a mail; sends that start a conversation still go out.
func (c *Channel) SendPart(ctx context.Context, r channels.Reply, p channels.Part) (string, error) {
	addr, err := mail.ParseAddress(r.Route.ChatID)
	if err != nil {
		return "", &channels.SendError{Err: fmt.Errorf("email chat %q is not an address: %w", r.Route.ChatID, err), Permanent: true}
	}
	// A route that came with a mail (it names its sender) answers that
	// sender; the message tool's route to a new address starts a conversation.
	answersMail := r.Route.ReplyTo != "" || r.Route.SenderID != ""
	if answersMail && !c.cfg.AutoReplyEnabled {
		c.Log.Info("email reply not sent: autoReplyEnabled is false", "to", addr.Address, "in_reply_to", r.Route.ReplyTo)
		return "", nil
	}
	firstText := p.Media == "" && p.Index == len(r.Media)
	filesOnly := p.Media != "" && p.Last
	if p.Media != "" && !filesOnly {
		return "", nil // attached to the text mail that follows
	}
	var files []outFile
	var notes []string
	if firstText || filesOnly {
		files, notes = c.loadFiles(r.Media)
	}
	text, html := render(strings.TrimSpace(strings.Join(append([]string{p.Text}, notes...), "\n\n")))
	from, err := mail.ParseAddress(c.cfg.from()) // validated in New
	if err != nil {
		return "", &channels.SendError{Err: fmt.Errorf("channels.email.fromAddress: %w", err), Permanent: true}
	}
	m := outMail{
		from: from, to: addr.Address,
		subject:   replySubject(r.Route.ThreadID, c.cfg.subjectPrefix()),
		messageID: c.messageID(r, p),
		inReplyTo: r.Route.ReplyTo,
		text:      text, html: html, files: files,
		date: time.Now(),
	}
	raw, err := m.bytes()
	if err != nil {
		return "", &channels.SendError{Err: fmt.Errorf("compose the mail to %s: %w", addr.Address, err), Permanent: true}
	}
	if err := c.sendSMTP(ctx, from.Address, addr.Address, raw); err != nil {
		return "", sendError(err)
	}
	c.Log.Info("email sent", "to", addr.Address, "message_id", m.messageID, "in_reply_to", m.inReplyTo, "files", len(files))
	return m.messageID, nil
}

// messageID names a part's mail the same on every attempt of a delivery,
// so a mail sent twice (a crash between send and record) is one mail to
// clients that dedupe by Message-ID.
func (c *Channel) messageID(r channels.Reply, p channels.Part) string {
	domain := "nanobot.local"
	if a, err := mail.ParseAddress(c.cfg.from()); err == nil {
		if _, d, ok := strings.Cut(a.Address, "@"); ok && d != "" {
			domain = d
		}
	}
	var id string
	if key := r.Key(); key != "" {
		sum := sha256.Sum256(fmt.Appendf(nil, "%s\x00%d", key, p.Index))
		id = hex.EncodeToString(sum[:12])
	} else {
		id = strings.ToLower(rand.Text())
	}
	return "nanobot." + id + "@" + domain
}
