package integration

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels/email/mailpeer"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// TestGatewayAnswersAnEmailInItsThread: the real `nanobot gateway` with
// the Email channel on a real Dovecot and a recording SMTP server reads a
// mail, runs the turn on Temporal and mails the model's answer back,
// threaded under the mail.
func TestGatewayAnswersAnEmailInItsThread(t *testing.T) {
	imap := mailpeer.StartIMAP(t)
	smtp := mailpeer.StartSMTP(t)
	dev := testenv.StartDevServer(t)
	model := modeltest.New().Handle(func(req *modeltest.RecordedRequest) modeltest.Step {
		last := req.Messages[len(req.Messages)-1].Content
		if strings.Contains(last, "[EMAIL-CONTEXT]") && strings.Contains(last, "hi from email") {
			return modeltest.Text("Hello, **Email**.")
		}
		return modeltest.Text("Hello again.")
	})
	defer model.Close()
	home := testenv.NewHome(t, model.URL(), map[string]any{
		"channels": map[string]any{
			"email": map[string]any{"enabled": true, "consentGranted": true,
				"imapHost": imap.Host, "imapPort": imap.Port, "imapUsername": imap.User, "imapPassword": imap.Pass, "imapUseSsl": false,
				"smtpHost": smtp.Host, "smtpPort": smtp.Port, "smtpUsername": smtp.User, "smtpPassword": smtp.Pass, "smtpUseTls": false,
				"fromAddress": mailpeer.User, "allowFrom": []string{"alice@example.org"},
				"verifyDkim": false, "verifySpf": false},
		},
	})
	_, out, errOut := startNanobot(t, home.Env(dev.Addr), "gateway")
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "  email: "+mailpeer.User) }, 90*time.Second, 50*time.Millisecond,
		"the banner names the mailbox:\n%s\n%s", out, errOut)

	imap.Deliver(mailpeer.Compose("hi from email\n", "From: Alice <alice@example.org>", "To: "+mailpeer.User,
		"Subject: Question", "Message-ID: <q1@example.org>", "Date: Mon, 02 Jun 2025 10:00:00 +0000",
		"MIME-Version: 1.0", "Content-Type: text/plain; charset=utf-8"))

	require.Eventually(t, func() bool { return len(smtp.Mails()) == 1 }, 90*time.Second, 50*time.Millisecond, "the reply mail:\n%s\n%s", out, errOut)
	m := smtp.Mails()[0]
	require.Equal(t, []string{"alice@example.org"}, m.To)
	require.Equal(t, "Re: Question", m.Header.Get("Subject"))
	require.Equal(t, "<q1@example.org>", m.Header.Get("In-Reply-To"))
	require.Equal(t, "<q1@example.org>", m.Header.Get("References"))
	require.Equal(t, "auto-replied", m.Header.Get("Auto-Submitted"))
	require.Contains(t, m.Text, "Hello, Email.", "the Markdown reads as text")
	require.Contains(t, m.HTML, "Hello, <strong>Email</strong>.")
	require.Equal(t, 1, model.Count())
	_, msgs := sessionLines(t, home, "email:alice@example.org")
	require.Len(t, msgs, 2, "one session per sender: the mail and its reply")
	require.Zero(t, imap.Unseen(), "the mail is marked seen")
}
