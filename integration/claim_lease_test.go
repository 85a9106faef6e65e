package integration

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels/email/mailpeer"
	"github.com/nanobot-durable/nanobot/internal/pgtest"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/pgstore"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
	"github.com/nanobot-durable/nanobot/stores"
)

// The mail a gateway claimed and was killed before handing over, and its
// key in the Email channel's dedupe set.
const (
	leaseMailID  = "lease-1@example.org"
	leaseMailKey = "mid:" + leaseMailID
	leaseMailSet = "email-handled"
)

// leaseMailbox is a mailbox holding the mail, a gateway's home on the
// database to read it, and what the gateway answered.
type leaseMailbox struct {
	imap  *mailpeer.IMAP
	smtp  *mailpeer.SMTP
	model *modeltest.Server
	home  *testenv.Home
	db    *pgstore.DB
}

func newLeaseMailbox(t *testing.T) *leaseMailbox {
	t.Helper()
	url := pgtest.Database(t)
	m := &leaseMailbox{imap: mailpeer.StartIMAP(t), smtp: mailpeer.StartSMTP(t), model: answering(map[string]string{"are you there": "Here."})}
	t.Cleanup(m.model.Close)
	m.home = testenv.NewHome(t, m.model.URL(), map[string]any{
		"database": map[string]any{"url": url},
		"channels": map[string]any{"email": map[string]any{"enabled": true, "consentGranted": true,
			"imapHost": m.imap.Host, "imapPort": m.imap.Port, "imapUsername": m.imap.User, "imapPassword": m.imap.Pass, "imapUseSsl": false,
			"smtpHost": m.smtp.Host, "smtpPort": m.smtp.Port, "smtpUsername": m.smtp.User, "smtpPassword": m.smtp.Pass, "smtpUseTls": false,
			"fromAddress": mailpeer.User, "allowFrom": []string{"alice@example.org"}, "verifyDkim": false, "verifySpf": false}},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var err error
	m.db, err = pgstore.Open(ctx, url, nil)
	require.NoError(t, err)
	t.Cleanup(m.db.Close)
	m.imap.Deliver(mailpeer.Compose("are you there?\n", "From: Alice <alice@example.org>", "To: "+mailpeer.User,
		"Subject: Lease", "Message-ID: <"+leaseMailID+">", "Date: Mon, 02 Jun 2025 10:00:00 +0000",
		"MIME-Version: 1.0", "Content-Type: text/plain; charset=utf-8"))
	return m
}

// claimAsKilled records the claim a gateway made before it was killed:
// holder, its run, and a lease that ends in the given interval.
func (m *leaseMailbox) claimAsKilled(t *testing.T, holder, lease string) {
	t.Helper()
	_, err := m.db.Pool().Exec(context.Background(), `INSERT INTO channel_keys (set_name, key, holder, run, claimed_until)
		VALUES ($1, $2, $3, 'the-killed-run', now() + $4::interval)`, leaseMailSet, leaseMailKey, holder, lease)
	require.NoError(t, err)
}

// gateway starts `nanobot gateway` on the home with env.
func (m *leaseMailbox) gateway(t *testing.T, env ...string) outputs {
	t.Helper()
	dev := testenv.StartDevServer(t)
	_, out, errOut := startNanobot(t, m.home.Env(dev.Addr, append(env, "NANOBOT_LOG_LEVEL=info")...), "gateway")
	return outputs{out, errOut}
}

// answeredOnce waits for the reply and checks it was the only one, from one
// model call, and that the claim became a handled key.
func (m *leaseMailbox) answeredOnce(t *testing.T, logs outputs) {
	t.Helper()
	require.Eventually(t, func() bool { return len(m.smtp.Mails()) >= 1 }, 90*time.Second, 50*time.Millisecond, "no reply:\n%s", logs)
	require.Eventually(t, func() bool { return m.imap.Unseen() == 0 }, 30*time.Second, 50*time.Millisecond, "the mail is marked seen")
	require.Len(t, m.smtp.Mails(), 1, "answered once:\n%s", logs)
	require.Equal(t, "Re: Lease", m.smtp.Mails()[0].Header.Get("Subject"))
	require.Equal(t, 1, m.model.Count())
	var key string
	var claimed bool
	require.NoError(t, m.db.Pool().QueryRow(context.Background(), `SELECT key, claimed_until IS NOT NULL FROM channel_keys WHERE set_name = $1`,
		leaseMailSet).Scan(&key, &claimed))
	require.Equal(t, leaseMailKey, key, "the claim the test made is the mail's")
	require.False(t, claimed, "handled")
}

// TestAMailClaimedByAKilledGatewayIsAnsweredOnceAfterItsRestart: a gateway
// SIGKILLed between claiming a mail and handing it over left its claim; the
// same gateway (host and home) restarted takes the mail back at once and
// answers it once. The lease is long (NANOBOT_CLAIM_LEASE_S=600 and ten
// minutes left on the claim): only the restart rule can free it in time.
func TestAMailClaimedByAKilledGatewayIsAnsweredOnceAfterItsRestart(t *testing.T) {
	m := newLeaseMailbox(t)
	m.claimAsKilled(t, stores.ClaimLease(filepath.Dir(m.home.ConfigPath)).Holder, "10 minutes")
	logs := m.gateway(t, "NANOBOT_CLAIM_LEASE_S=600")
	m.answeredOnce(t, logs)
}

// TestAMailClaimedByADeadGatewayIsAnsweredOnceAfterTheLease: another
// gateway claimed the mail and died; once its lease is over (a short one,
// as NANOBOT_CLAIM_LEASE_S=3 gives), a gateway that polls the mailbox takes
// it and answers it once. Before this lease the claim was kept forever.
func TestAMailClaimedByADeadGatewayIsAnsweredOnceAfterTheLease(t *testing.T) {
	m := newLeaseMailbox(t)
	m.claimAsKilled(t, "another-host:/home/nanobot/.nanobot", "3 seconds")
	require.Eventually(t, func() bool {
		var over bool
		err := m.db.Pool().QueryRow(context.Background(), `SELECT claimed_until <= now() FROM channel_keys WHERE key = $1`, leaseMailKey).Scan(&over)
		return err == nil && over
	}, 30*time.Second, 50*time.Millisecond, "the dead gateway's lease never ended")
	logs := m.gateway(t, "NANOBOT_CLAIM_LEASE_S=3")
	m.answeredOnce(t, logs)
	require.False(t, strings.Contains(logs.String(), "ran out before its hand-over"), "the gateway's own claim held:\n%s", logs)
}
