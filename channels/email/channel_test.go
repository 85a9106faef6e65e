package email

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels/email/mailpeer"
	"github.com/nanobot-durable/nanobot/protocol"
)

func TestMailInThreadedReplyOut(t *testing.T) {
	h := startHarness(t, mailpeer.Options{}, nil)
	h.deliver("Please pay the invoice.\nThanks", mailFrom("Alice <Alice@Example.org>", "m1@example.org", "Invoice #42")...)

	in := h.waitPublished("m1@example.org")
	require.Equal(t, protocol.Route{Channel: "email", ChatID: alice, SenderID: alice, ReplyTo: "m1@example.org", ThreadID: "Invoice #42"}, in.Route)
	require.Equal(t, "email:"+alice, in.SessionKey, "one session per sender")
	require.Equal(t, "[EMAIL-CONTEXT] Email received.\nFrom: alice@example.org\nSubject: Invoice #42\nDate: Mon, 02 Jun 2025 10:00:00 +0000\n\nPlease pay the invoice.\nThanks", in.Content)

	m := h.waitMails(1)[0]
	require.Equal(t, []string{alice}, m.To)
	require.Equal(t, mailpeer.User, m.From)
	require.Equal(t, `"Nanobot" <`+mailpeer.User+`>`, m.Header.Get("From"), "fromAddress as written")
	require.Equal(t, "Re: Invoice #42", m.Header.Get("Subject"))
	require.Equal(t, "<m1@example.org>", m.Header.Get("In-Reply-To"))
	require.Equal(t, "<m1@example.org>", m.Header.Get("References"))
	require.Equal(t, "auto-replied", m.Header.Get("Auto-Submitted"))
	require.True(t, strings.HasPrefix(m.Header.Get("Content-Type"), "multipart/alternative"), m.Header.Get("Content-Type"))
	require.Contains(t, m.Text, "echo: Please pay the invoice.", "the Markdown reads as plain text")
	require.Contains(t, m.HTML, "<strong>echo</strong>")
	require.NotEmpty(t, m.Header.Get("Message-ID"))
	require.Eventually(t, func() bool { return h.imap.Unseen() == 0 }, wait, 50*time.Millisecond, "markSeen: the mail is flagged seen")
	require.Empty(t, h.agent.sendErrors())
}
