package email

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/emersion/go-message"
	_ "github.com/emersion/go-message/charset" // mail in ISO-8859-x, Windows-125x, GB18030, …
	"github.com/emersion/go-message/mail"
)

// Limits on what one mail may make us hold.
const (
	// maxParts stops the walk through a mail built of endless parts.
	maxParts = 256
	// maxTextBytes bounds the text read from one part, before maxBodyChars cuts it.
	maxTextBytes = 4 << 20
)

// parsedMail is what the channel reads from one mail.
type parsedMail struct {
	header    mail.Header
	from      string // the sender's bare address, lower case
	subject   string
	messageID string // without the angle brackets
	date      string // as written
	sentAt    time.Time
	body      string // text/plain, or the HTML reduced to text
	report    bool   // a multipart/report: a bounce or a receipt
	files     []inFile
}

// inFile is an attachment of an incoming mail; data holds at most
// limit+1 bytes, so a file over the limit is known to be without being kept.
type inFile struct {
	name        string
	contentType string
	data        []byte
}

// parseMail reads a raw mail as far as it is readable: a mail broken
// halfway keeps what came before the break; only a mail without a readable
// header is an error.
func parseMail(raw []byte, attachmentLimit int) (*parsedMail, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, errors.New("empty mail")
	}
	e, err := message.Read(bytes.NewReader(raw))
	if e == nil {
		return nil, fmt.Errorf("read header: %w", err)
	}
	m := &parsedMail{header: mail.Header{Header: e.Header}}
	m.readHeader()
	var plain, html []string
	parts := 0
	_ = e.Walk(func(_ []int, part *message.Entity, _ error) error {
		if parts++; parts > maxParts {
			return errors.New("too many parts")
		}
		ct, params, _ := part.Header.ContentType()
		ct = strings.ToLower(ct)
		if ct == "multipart/report" {
			m.report = true
		}
		if strings.HasPrefix(ct, "multipart/") {
			return nil
		}
		disp, dparams, _ := part.Header.ContentDisposition()
		if strings.EqualFold(disp, "attachment") {
			m.files = append(m.files, readFile(part, ct, params, dparams, attachmentLimit))
			return nil
		}
		switch ct {
		case "text/plain", "":
			plain = append(plain, readText(part.Body))
		case "text/html":
			html = append(html, readText(part.Body))
		}
		return nil
	})
	switch {
	case len(plain) > 0:
		m.body = strings.TrimSpace(strings.Join(plain, "\n\n"))
	case len(html) > 0:
		m.body = strings.TrimSpace(htmlToText(strings.Join(html, "\n\n")))
	}
	return m, nil
}

func (m *parsedMail) readHeader() {
	if from, err := m.header.AddressList("From"); err == nil && len(from) > 0 {
		m.from = strings.ToLower(strings.TrimSpace(from[0].Address))
	} else if raw := m.header.Get("From"); raw != "" {
		m.from = normalizeAddress(raw) // not RFC 5322, still an address: best effort
		if !strings.Contains(m.from, "@") {
			m.from = ""
		}
	}
	subject, err := m.header.Subject()
	if err != nil {
		subject = m.header.Get("Subject")
	}
	m.subject = oneLine(subject)
	m.messageID, _ = m.header.MessageID()
	if strings.ContainsAny(m.messageID, " \t\r\n<>") {
		m.messageID = ""
	}
	m.date = oneLine(m.header.Get("Date"))
	m.sentAt = time.Now()
	if t, err := m.header.Date(); err == nil && !t.IsZero() {
		m.sentAt = t
	}
}

// readText reads a decoded text part, valid UTF-8, at most maxTextBytes.
func readText(r io.Reader) string {
	b, _ := io.ReadAll(io.LimitReader(r, maxTextBytes)) // a broken part: what was read
	return strings.ToValidUTF8(strings.ReplaceAll(string(b), "\r\n", "\n"), "\uFFFD")
}

func readFile(part *message.Entity, ct string, params, dparams map[string]string, limit int) inFile {
	name := dparams["filename"]
	if name == "" {
		name = params["name"]
	}
	data, _ := io.ReadAll(io.LimitReader(part.Body, int64(limit)+1))
	if ct == "" {
		ct = "application/octet-stream"
	}
	return inFile{name: strings.ToValidUTF8(name, "_"), contentType: ct, data: data}
}

// oneLine is a header value fit for a subject line: valid UTF-8, no line breaks.
func oneLine(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > 250 {
		s = string([]rune(s)[:250])
	}
	return s
}

// cutRunes keeps the first n runes of s, saying when it cut.
func cutRunes(s string, n int) string {
	if n <= 0 || utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + fmt.Sprintf("\n[… the mail goes on; cut at maxBodyChars=%d characters]", n)
}
