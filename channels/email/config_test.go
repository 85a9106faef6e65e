package email

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/channeltest"
	"github.com/nanobot-durable/nanobot/protocol"
)

const fullBlock = `{"enabled": true, "consentGranted": true, "imapHost": "imap.example.org", "imapUsername": "bot@example.org",
	"imapPassword": "p", "smtpHost": "smtp.example.org", "smtpUsername": "bot@example.org", "smtpPassword": "p",
	"allowFrom": ["Alice <ALICE@example.org>", "bob@example.org"]}`

func TestNanobotBlockReadWithItsDefaults(t *testing.T) {
	c, err := load(channeltest.ConfigWith(t, Name, `{"enabled": true, "consent_granted": true, "imap_host": "imap.example.org", "max_body_chars": 500}`))
	require.NoError(t, err)
	want := Defaults()
	want.Enabled, want.ConsentGranted, want.IMAPHost, want.MaxBodyChars = true, true, "imap.example.org", 500
	require.Equal(t, want, c, "snake_case keys read; every other key at nanobot's default")
	require.Equal(t, 993, c.IMAPPort)
	require.Equal(t, 587, c.SMTPPort)
	require.True(t, c.IMAPUseSSL && c.SMTPUseTLS && !c.SMTPUseSSL && c.MarkSeen && c.AutoReplyEnabled && c.VerifyDKIM && c.VerifySPF)
	require.Equal(t, "INBOX", c.IMAPMailbox)
	require.Equal(t, "Re: ", c.SubjectPrefix)
	require.Equal(t, 30, c.PollIntervalSeconds)
	require.Equal(t, 2_000_000, c.MaxAttachmentSize)
	require.Equal(t, 5, c.MaxAttachmentsPerEmail)
}

func TestWithoutConsentTheChannelDoesNotStart(t *testing.T) {
	cfg := channeltest.ConfigWith(t, Name, strings.Replace(fullBlock, `"consentGranted": true`, `"consentGranted": false`, 1))
	b := channels.Build(cfg, channels.Deps{Config: cfg}, nil)
	require.Empty(t, b.Channels)
	require.Len(t, b.Warnings, 1)
	require.Contains(t, b.Warnings[0], "channels.email is enabled but lacks channels.email.consentGranted")
	require.Contains(t, b.Warnings[0], "the channel is not started")

	cfg = channeltest.ConfigWith(t, Name, `{"enabled": true}`)
	w := channels.Build(cfg, channels.Deps{Config: cfg}, nil).Warnings[0]
	for _, k := range []string{"consentGranted", "imapHost", "imapUsername", "imapPassword", "smtpHost", "smtpUsername", "smtpPassword"} {
		require.Contains(t, w, "channels.email."+k)
	}
}

func TestBuildsWhenComplete(t *testing.T) {
	cfg := channeltest.ConfigWith(t, Name, fullBlock)
	b := channels.Build(cfg, channels.Deps{Config: cfg, Workspace: t.TempDir()}, nil)
	require.Empty(t, b.Warnings)
	require.Len(t, b.Channels, 1)
	require.Equal(t, Name, b.Channels[0].Name())
	require.Contains(t, b.Queues, protocol.ChannelQueue(Name))
}

func TestAllowFromIsSenderAddressesInLowerCase(t *testing.T) {
	allow := channels.AllowFromFor(channeltest.ConfigWith(t, Name, fullBlock), Name)
	require.True(t, allow.Allows("alice@example.org"))
	require.True(t, allow.Allows("bob@example.org"))
	require.False(t, allow.Allows("mallory@example.org"))
	require.False(t, channels.AllowFromFor(channeltest.ConfigWith(t, Name, `{"enabled": true}`), Name).Allows("alice@example.org"), "empty: nobody")
}

func TestBadBlocksAreNamed(t *testing.T) {
	channeltest.CheckBlocks(t, Name, map[string]string{`{"enabled": true, "imapPort": "nine"}`: "channels.email.imapPort"}, nil)

	for block, want := range map[string]string{
		`"postAction": "archive"`:         `channels.email.postAction "archive"`,
		`"smtpPort": 70000`:               "channels.email.smtpPort 70000",
		`"fromAddress": "not an address"`: "channels.email.fromAddress",
		`"postAction": "move"`:            "channels.email.postActionMoveMailbox",
	} {
		cfg := channeltest.ConfigWith(t, Name, strings.Replace(fullBlock, `"enabled": true`, `"enabled": true, `+block, 1))
		b := channels.Build(cfg, channels.Deps{Config: cfg}, nil)
		require.Empty(t, b.Channels, block)
		require.Len(t, b.Warnings, 1, block)
		require.Contains(t, b.Warnings[0], want, block)
	}
}
