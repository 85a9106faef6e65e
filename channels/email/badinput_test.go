package email

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels/email/mailpeer"
)

// Broken mail is logged with its UID and dropped, or read as far as it
// goes; the channel never stops. A person's mail after them all is still
// answered.
func TestBadMailIsLoggedAndDroppedOrHandled(t *testing.T) {
	h := startHarness(t, mailpeer.Options{}, func(b map[string]any) { b["maxBodyChars"] = 100 })
	nested := strings.Repeat("--n\r\nContent-Type: multipart/mixed; boundary=\"n\"\r\n\r\n", 400)
	cases := []struct {
		name     string
		raw      []byte
		answered bool
		check    func(t *testing.T, content string)
		log      string
	}{
		{name: "no From", raw: mailpeer.Compose("hi", "To: bot@example.com", "Subject: x", "Message-ID: <nofrom@x>"),
			log: "email dropped: no sender address in From"},
		{name: "From is not an address", raw: mailpeer.Compose("hi", "From: just a name", "Subject: x", "Message-ID: <badfrom@x>"),
			log: "email dropped: no sender address in From"},
		{name: "invalid UTF-8 in subject and body", raw: mailpeer.Compose("caf\xe9 \xff\xfe ok", mailFrom(alice, "utf8@x", "bad \xff subject")...),
			answered: true, check: func(t *testing.T, content string) {
				require.True(t, utf8.ValidString(content))
				require.Contains(t, content, "Subject: bad \uFFFD subject")
				require.Contains(t, content, "ok")
			}},
		{name: "huge body cut at maxBodyChars", raw: mailpeer.Compose(strings.Repeat("é", 50_000), mailFrom(alice, "huge@x", "Long")...),
			answered: true, check: func(t *testing.T, content string) {
				_, body, _ := strings.Cut(content, "\n\n")
				require.True(t, strings.HasPrefix(body, strings.Repeat("é", 100)+"\n[… the mail goes on; cut at maxBodyChars=100"), body)
				require.Less(t, utf8.RuneCountInString(body), 200)
			}},
		{name: "multipart without a boundary", raw: mailpeer.Compose("text", mailFrom(alice, "noboundary@x", "MIME", "Content-Type: multipart/mixed")...),
			answered: true, check: func(t *testing.T, content string) { require.Contains(t, content, "(empty email body)") }},
		{name: "multipart never closed", raw: mailpeer.Compose("--b\r\nContent-Type: text/plain\r\n\r\nhalf a mail", mailFrom(alice, "unclosed@x", "MIME", `Content-Type: multipart/mixed; boundary="b"`)...),
			answered: true},
		{name: "unknown charset and transfer encoding", raw: mailpeer.Compose("raw words", mailFrom(alice, "charset@x", "=?x-klingon?q?qapla?=", "Content-Type: text/plain; charset=x-klingon", "Content-Transfer-Encoding: x-rot13")...),
			answered: true, check: func(t *testing.T, content string) { require.Contains(t, content, "raw words") }},
		{name: "broken base64", raw: mailpeer.Compose("!!!not base64!!!", mailFrom(alice, "b64@x", "B64", "Content-Transfer-Encoding: base64")...),
			answered: true},
		{name: "parts nested 400 deep", raw: mailpeer.Compose(nested, mailFrom(alice, "nested@x", "Deep", `Content-Type: multipart/mixed; boundary="n"`)...),
			answered: true},
		{name: "no header at all", raw: []byte("\x00\x01\x02 binary junk without any header\r\n\r\nbody\r\n"),
			log: "email dropped"},
	}
	for _, c := range cases {
		h.imap.Deliver(c.raw)
	}
	h.deliver("still here?", mailFrom(alice, "sentinel@x", "Sentinel")...)
	h.waitPublished("sentinel@x")

	answered := 1
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id := ""
			for _, in := range h.agent.received() {
				if strings.Contains(string(c.raw), "<"+in.Route.ReplyTo+">") {
					id = in.Route.ReplyTo
					if c.check != nil {
						c.check(t, in.Content)
					}
				}
			}
			require.Equal(t, c.answered, id != "", "answered")
			if c.answered {
				answered++
			}
			if c.log != "" {
				require.Contains(t, h.Logs.String(), c.log)
			}
		})
	}
	require.Len(t, h.waitMails(answered), answered)
	require.Contains(t, h.Logs.String(), "uid=")
}
