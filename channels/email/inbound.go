package email

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/emersion/go-imap/v2"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/protocol"
)

// outcome is what became of one mail.
type outcome int

const (
	// delivered: the agent has it.
	delivered outcome = iota
	// skipped: not for the agent (a loop, a stranger, unreadable); marked
	// seen, never read again.
	skipped
	// rejected: failed anti-spoofing; left unseen for the owner, never read again.
	rejected
	// retryLater: the agent could not take it now; left as it was.
	retryLater
	// elsewhere: another gateway took it in; left to it.
	elsewhere
)

// take reads one mail and hands it to the agent through the manager's
// gate. Whatever the mail holds, it is logged with its UID and dropped,
// never a crash.
func (c *Channel) take(ctx context.Context, uid imap.UID, key string, raw []byte) outcome {
	log := c.Log.With("uid", uid)
	m, err := parseMail(raw, c.cfg.MaxAttachmentSize)
	if err != nil {
		log.Warn("email dropped: unreadable", "error", err)
		return skipped
	}
	log = log.With("message_id", m.messageID, "from", m.from)
	if m.from == "" {
		log.Warn("email dropped: no sender address in From", "from_header", oneLine(m.header.Get("From")))
		return skipped
	}
	if why := c.notForTheAgent(m); why != "" {
		log.Info("email not answered: " + why)
		return skipped
	}
	if why := c.spoofed(m); why != "" {
		log.Warn("email rejected: it failed " + why)
		return rejected
	}
	in := c.inbound(m, uid)
	admitted := func(_ context.Context, in *protocol.Inbound) error {
		c.saveFiles(m, uid, in)
		return nil
	}
	// Claimed before it is taken: another gateway may poll the same mailbox.
	err = c.TakeIn(ctx, key, in, admitted)
	switch {
	case err == nil, errors.Is(err, channels.ErrHandled):
		return delivered
	case errors.Is(err, channels.ErrRefused):
		return skipped // the manager logged the stranger
	case errors.Is(err, channels.ErrDuplicate):
		return elsewhere
	default:
		return retryLater // TakeIn logged it; it is tried again
	}
}

// inbound is the agent's message: nanobot's [EMAIL-CONTEXT] text, the
// sender as chat, the mail's Message-ID to thread the reply under and its
// subject as the thread.
func (c *Channel) inbound(m *parsedMail, uid imap.UID) protocol.Inbound {
	body := m.body
	if body == "" {
		body = "(empty email body)"
	}
	body = cutRunes(body, c.cfg.MaxBodyChars)
	id := "email-" + m.messageID
	if m.messageID == "" {
		id = fmt.Sprintf("email-uid-%d", uid)
	}
	return protocol.Inbound{
		ID: id,
		Route: protocol.Route{
			Channel:  Name,
			ChatID:   m.from,
			SenderID: m.from,
			ReplyTo:  m.messageID,
			ThreadID: m.subject,
		},
		Content: fmt.Sprintf("[EMAIL-CONTEXT] Email received.\nFrom: %s\nSubject: %s\nDate: %s\n\n%s", m.from, m.subject, m.date, body),
		// Email never offers pairing codes (nanobot's rule: no mail to
		// forged senders): the manager ignores strangers as in a group.
		Group:  true,
		SentAt: m.sentAt,
		Metadata: map[string]string{
			"message_id":   m.messageID,
			"subject":      m.subject,
			"date":         m.date,
			"sender_email": m.from,
			"uid":          strconv.FormatUint(uint64(uid), 10),
		},
	}
}
