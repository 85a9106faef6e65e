package email

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels/email/mailpeer"
)

// Mails a robot sent, from a list or from ourselves, and a stranger's,
// get nothing back; a mail a person sent after them is answered, which
// shows they were read (mail is read in UID order).
func TestLoopsAndStrangersGetNothing(t *testing.T) {
	h := startHarness(t, mailpeer.Options{}, nil)
	cases := []struct {
		name    string
		headers []string
		body    string
	}{
		{"auto-reply", mailFrom(alice, "auto@x", "Out of office", "Auto-Submitted: auto-replied"), "I am away"},
		{"auto-generated", mailFrom(alice, "gen@x", "Report", "Auto-Submitted: auto-generated; x=1"), "stats"},
		{"x-autoreply", mailFrom(alice, "xar@x", "Away", "X-Autoreply: yes"), "away"},
		{"x-autorespond", mailFrom(alice, "xaresp@x", "Away", "X-Autorespond: yes"), "away"},
		{"precedence bulk", mailFrom(alice, "bulk@x", "News", "Precedence: bulk"), "news"},
		{"precedence auto_reply", mailFrom(alice, "par@x", "Away", "Precedence: auto_reply"), "away"},
		{"bounce, empty Return-Path", append([]string{"Return-Path: <>"}, mailFrom(alice, "rp@x", "Undelivered")...), "failed"},
		{"bounce from MAILER-DAEMON", mailFrom("MAILER-DAEMON@example.org", "md@x", "Undelivered Mail"), "failed"},
		{"bounce from postmaster", mailFrom("postmaster@example.org", "pm@x", "Delivery failure"), "failed"},
		{"mailing list, List-Id", mailFrom(alice, "list@x", "[dev] hi", "List-Id: <dev.lists.example.org>"), "hi all"},
		{"mailing list, List-Unsubscribe", mailFrom(alice, "unsub@x", "Newsletter", "List-Unsubscribe: <mailto:u@x>"), "news"},
		{"our own address", mailFrom("Nanobot <BOT@example.com>", "self@x", "Re: hi"), "our own reply"},
		{"a stranger", mailFrom("mallory@example.net", "stranger@x", "Hello"), "let me in"},
	}
	for _, c := range cases {
		h.deliver(c.body, c.headers...)
	}
	h.imap.Deliver(mailpeer.Compose("---\r\nContent-Type: text/plain\r\n\r\nreport\r\n-----\r\n",
		"From: mailer@example.org", "To: bot@example.com", "Subject: DSN", "Message-ID: <dsn@x>",
		"MIME-Version: 1.0", `Content-Type: multipart/report; report-type=delivery-status; boundary="-"`))
	h.deliver("a person writes", mailFrom(alice, "person@x", "Hi", "Auto-Submitted: no")...)

	h.waitPublished("person@x")
	mails := h.waitMails(1)
	require.Len(t, mails, 1, "only the person's mail is answered")
	require.Equal(t, "<person@x>", mails[0].Header.Get("In-Reply-To"))
	require.Len(t, h.agent.received(), 1, "none of the others reached the agent")
	for _, want := range []string{"Auto-Submitted: auto-replied", "Auto-Submitted: auto-generated", "X-Autoreply", "X-Autorespond",
		"Precedence: bulk", "Precedence: auto_reply", "empty Return-Path", "from mailer-daemon@example.org", "from postmaster@example.org",
		"List-Id", "List-Unsubscribe", "own address", "multipart/report"} {
		require.Contains(t, h.Logs.String(), want)
	}
	require.Contains(t, h.Logs.String(), "message refused: sender not allowed")
	require.Zero(t, h.imap.Unseen(), "every one of them is marked seen")
}

func TestSpoofCheckNeedsAuthenticationResults(t *testing.T) {
	h := startHarness(t, mailpeer.Options{}, func(b map[string]any) { delete(b, "verifyDkim"); delete(b, "verifySpf") })
	h.deliver("forged", mailFrom(alice, "forged@x", "Pay now")...)
	h.deliver("spf only", mailFrom(alice, "spf@x", "Pay now", "Authentication-Results: mx.example.com; spf=pass smtp.mailfrom=example.org; dkim=fail")...)
	h.deliver("real", mailFrom(alice, "real@x", "Hello", "Authentication-Results: mx.example.com; spf=pass smtp.mailfrom=example.org; dkim=pass header.d=example.org")...)

	h.waitPublished("real@x")
	require.Len(t, h.waitMails(1), 1)
	require.Len(t, h.agent.received(), 1)
	require.Contains(t, h.Logs.String(), "email rejected: it failed SPF")
	require.Contains(t, h.Logs.String(), "email rejected: it failed DKIM")
	require.Equal(t, 2, h.imap.Unseen(), "a rejected mail is left unseen for the owner, as nanobot does")
}

func TestHeaderToken(t *testing.T) {
	for in, want := range map[string]string{"auto-replied": "auto-replied", " No ": "no", "auto-generated; foo=bar": "auto-generated", "": ""} {
		require.Equal(t, want, headerToken(in), in)
	}
}
