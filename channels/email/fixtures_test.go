package email

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/channeltest"
	"github.com/nanobot-durable/nanobot/channels/email/mailpeer"
	"github.com/nanobot-durable/nanobot/protocol"
)

// wait is how long a test waits for a mail to go round: generous, for a
// loaded machine.
const wait = 30 * time.Second

const alice = "alice@example.org"

// harness is the channel on a real Dovecot and a recording SMTP server,
// behind the real channel manager (allowFrom, pairing, the hook), with an
// agent that answers every message at once.
type harness struct {
	*channeltest.Run[*Channel]
	t     *testing.T
	imap  *mailpeer.IMAP
	smtp  *mailpeer.SMTP
	env   channeltest.Env
	agent *echoAgent
}

// startHarness starts the servers and the channel; mod changes the
// channels.email block (keys as in config.json) before it starts.
func startHarness(t *testing.T, opts mailpeer.Options, mod func(block map[string]any)) *harness {
	t.Helper()
	h := &harness{t: t, imap: mailpeer.StartIMAP(t, opts), smtp: mailpeer.StartSMTP(t), agent: &echoAgent{}}
	block := map[string]any{
		"enabled": true, "consentGranted": true,
		"imapHost": h.imap.Host, "imapPort": h.imap.Port, "imapUsername": h.imap.User, "imapPassword": h.imap.Pass, "imapUseSsl": false,
		"smtpHost": h.smtp.Host, "smtpPort": h.smtp.Port, "smtpUsername": h.smtp.User, "smtpPassword": h.smtp.Pass, "smtpUseTls": false,
		"fromAddress": "Nanobot <" + mailpeer.User + ">",
		"allowFrom":   []string{"Alice@Example.org"},
		"verifyDkim":  false, "verifySpf": false,
		"pollIntervalSeconds": 3600, // IDLE does the work; a test that polls says so
	}
	if mod != nil {
		mod(block)
	}
	h.env = channeltest.NewEnv(t, Name, block)
	h.start()
	return h
}

// start runs a channel on the harness's env under a manager (a restart
// is Stop, then start: the same config, the same handled mails).
func (h *harness) start() {
	h.t.Helper()
	h.Run = channeltest.Start(h.t, h.env, New, channeltest.Behind(h.agent))
	h.agent.setManager(h.Manager)
}

// deliver puts a mail in the INBOX.
func (h *harness) deliver(body string, headers ...string) {
	h.imap.Deliver(mailpeer.Compose(body, headers...))
}

// mailFrom are the headers of a mail from sender with the given
// Message-ID and subject: plain text unless extra has a Content-Type.
func mailFrom(sender, id, subject string, extra ...string) []string {
	hs := []string{
		"From: " + sender, "To: " + mailpeer.User, "Subject: " + subject,
		"Message-ID: <" + id + ">", "Date: Mon, 02 Jun 2025 10:00:00 +0000", "MIME-Version: 1.0",
	}
	typed := false
	for _, e := range extra {
		typed = typed || strings.HasPrefix(strings.ToLower(e), "content-type:")
	}
	if !typed {
		hs = append(hs, "Content-Type: text/plain; charset=utf-8")
	}
	return append(hs, extra...)
}

// waitMails waits until n mails went out and returns them.
func (h *harness) waitMails(n int) []mailpeer.Mail {
	h.t.Helper()
	require.Eventually(h.t, func() bool { return len(h.smtp.Mails()) >= n }, wait, 20*time.Millisecond,
		"expected %d mails sent", n)
	return h.smtp.Mails()
}

// waitPublished waits until the agent got a message with this Message-ID.
func (h *harness) waitPublished(messageID string) protocol.Inbound {
	h.t.Helper()
	var got protocol.Inbound
	require.Eventually(h.t, func() bool {
		for _, in := range h.agent.received() {
			if in.Route.ReplyTo == messageID {
				got = in
				return true
			}
		}
		return false
	}, wait, 20*time.Millisecond, "expected the agent to get mail %s", messageID)
	return got
}

// echoAgent stands in for the bus and the agent: it records each message
// and answers it through the manager, as a turn's delivery would.
type echoAgent struct {
	mu    sync.Mutex
	mgr   *channels.Manager
	got   []protocol.Inbound
	media []string // files every answer carries
	errs  []error
}

func (a *echoAgent) setManager(m *channels.Manager) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.mgr = m
}

func (a *echoAgent) manager() *channels.Manager {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.mgr
}

func (a *echoAgent) Publish(ctx context.Context, msg protocol.Inbound) (string, error) {
	a.mu.Lock()
	a.got = append(a.got, msg)
	media, mgr := a.media, a.mgr
	a.mu.Unlock()
	go func() {
		body := msg.Content
		if _, rest, ok := strings.Cut(body, "\n\n"); ok {
			body = rest
		}
		first, _, _ := strings.Cut(body, "\n")
		r := channels.Reply{ID: "d-" + msg.ID, Route: msg.Route, SessionKey: msg.SessionKey, Turn: msg.ID,
			Text: fmt.Sprintf("**echo**: %s", first), Media: media, Kind: protocol.ReplyAnswer}
		if err := mgr.Send(context.Background(), r); err != nil {
			a.mu.Lock()
			a.errs = append(a.errs, err)
			a.mu.Unlock()
		}
	}()
	return "", nil
}

func (a *echoAgent) received() []protocol.Inbound {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]protocol.Inbound(nil), a.got...)
}

func (a *echoAgent) sendErrors() []error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]error(nil), a.errs...)
}
