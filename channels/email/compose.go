package email

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/emersion/go-message/mail"
)

// outMail is one mail the channel sends.
type outMail struct {
	from      *mail.Address
	to        string
	subject   string
	messageID string // without angle brackets
	inReplyTo string // the Message-ID answered, "" for a mail that starts a thread
	text      string
	html      string
	files     []outFile
	date      time.Time
}

// bytes is the mail as SMTP sends it: text and HTML as
// multipart/alternative, inside multipart/mixed when files ride along.
func (m outMail) bytes() ([]byte, error) {
	var h mail.Header
	h.SetDate(m.date)
	h.SetAddressList("From", []*mail.Address{m.from})
	h.SetAddressList("To", []*mail.Address{{Address: m.to}})
	h.SetSubject(m.subject)
	h.SetMessageID(m.messageID)
	// Our mail is automatic: other robots (vacation responders) must not
	// answer it, and a reply says so too (RFC 3834).
	if m.inReplyTo != "" {
		h.SetMsgIDList("In-Reply-To", []string{m.inReplyTo})
		h.SetMsgIDList("References", []string{m.inReplyTo})
		h.Set("Auto-Submitted", "auto-replied")
	} else {
		h.Set("Auto-Submitted", "auto-generated")
	}
	h.Set("X-Auto-Response-Suppress", "All")

	var buf bytes.Buffer
	if len(m.files) == 0 {
		w, err := mail.CreateInlineWriter(&buf, h)
		if err != nil {
			return nil, fmt.Errorf("start the mail: %w", err)
		}
		if err := m.writeBodies(w); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	}
	w, err := mail.CreateWriter(&buf, h)
	if err != nil {
		return nil, fmt.Errorf("start the mail: %w", err)
	}
	iw, err := w.CreateInline()
	if err != nil {
		return nil, fmt.Errorf("start the text: %w", err)
	}
	if err := m.writeBodies(iw); err != nil {
		return nil, err
	}
	for _, f := range m.files {
		var ah mail.AttachmentHeader
		ah.Set("Content-Type", f.contentType)
		ah.SetFilename(f.name)
		if err := writePart(func() (io.WriteCloser, error) { return w.CreateAttachment(ah) }, f.data); err != nil {
			return nil, fmt.Errorf("attach %s: %w", f.name, err)
		}
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("end the mail: %w", err)
	}
	return buf.Bytes(), nil
}

// writeBodies writes the text and HTML alternatives and closes w.
func (m outMail) writeBodies(w *mail.InlineWriter) error {
	for _, alt := range []struct{ ct, body string }{{"text/plain", m.text}, {"text/html", m.html}} {
		var ih mail.InlineHeader
		ih.SetContentType(alt.ct, map[string]string{"charset": "utf-8"})
		if err := writePart(func() (io.WriteCloser, error) { return w.CreatePart(ih) }, []byte(alt.body)); err != nil {
			return fmt.Errorf("write the %s part: %w", alt.ct, err)
		}
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("end the text: %w", err)
	}
	return nil
}

func writePart(create func() (io.WriteCloser, error), data []byte) error {
	pw, err := create()
	if err != nil {
		return err
	}
	if _, err := pw.Write(data); err != nil {
		pw.Close()
		return err
	}
	return pw.Close()
}

// replySubject is nanobot's rule: the subject answered with subjectPrefix
// in front, unless it already starts with "Re:"; "nanobot reply" when none.
func replySubject(subject, prefix string) string {
	subject = strings.TrimSpace(subject)
	if subject == "" {
		subject = "nanobot reply"
	}
	if strings.HasPrefix(strings.ToLower(subject), "re:") {
		return subject
	}
	return prefix + subject
}
