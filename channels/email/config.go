package email

import (
	"fmt"
	"net/mail"
	"strings"
	"time"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
)

// Config is channels.email, nanobot's keys and defaults unchanged.
type Config struct {
	Enabled bool `json:"enabled"`
	// ConsentGranted is the mailbox owner's explicit yes: without it the
	// channel does not start (nanobot's rule).
	ConsentGranted bool `json:"consentGranted"`

	IMAPHost     string `json:"imapHost"`
	IMAPPort     int    `json:"imapPort"`
	IMAPUsername string `json:"imapUsername"`
	IMAPPassword string `json:"imapPassword"`
	IMAPMailbox  string `json:"imapMailbox"`
	IMAPUseSSL   bool   `json:"imapUseSsl"`

	SMTPHost     string `json:"smtpHost"`
	SMTPPort     int    `json:"smtpPort"`
	SMTPUsername string `json:"smtpUsername"`
	SMTPPassword string `json:"smtpPassword"`
	SMTPUseTLS   bool   `json:"smtpUseTls"` // STARTTLS
	SMTPUseSSL   bool   `json:"smtpUseSsl"` // implicit TLS
	FromAddress  string `json:"fromAddress"`

	// AutoReplyEnabled false: mails are still read and taken to the agent,
	// but nothing is sent back to a mail's sender (proactive sends go out).
	AutoReplyEnabled    bool `json:"autoReplyEnabled"`
	PollIntervalSeconds int  `json:"pollIntervalSeconds"`
	MarkSeen            bool `json:"markSeen"`
	// PostAction is "" (none), "delete" or "move", done to a mail once it
	// reached the agent.
	PostAction              string `json:"postAction"`
	PostActionMoveMailbox   string `json:"postActionMoveMailbox"`
	PostActionExpunge       bool   `json:"postActionExpunge"`
	PostActionIgnoreSkipped bool   `json:"postActionIgnoreSkipped"`
	MaxBodyChars            int    `json:"maxBodyChars"`
	SubjectPrefix           string `json:"subjectPrefix"`
	// AllowFrom are sender addresses ("*" for anyone).
	AllowFrom []string `json:"allowFrom"`

	// Anti-spoofing: the receiving server's Authentication-Results must say pass.
	VerifyDKIM bool `json:"verifyDkim"`
	VerifySPF  bool `json:"verifySpf"`

	// AllowedAttachmentTypes are MIME patterns ("application/pdf",
	// "image/*", "*"); empty: attachments are not saved.
	AllowedAttachmentTypes []string `json:"allowedAttachmentTypes"`
	MaxAttachmentSize      int      `json:"maxAttachmentSize"` // bytes, per file, in and out
	MaxAttachmentsPerEmail int      `json:"maxAttachmentsPerEmail"`
}

// Defaults are nanobot's EmailConfig defaults.
func Defaults() Config {
	return Config{
		IMAPPort: 993, IMAPMailbox: "INBOX", IMAPUseSSL: true,
		SMTPPort: 587, SMTPUseTLS: true,
		AutoReplyEnabled: true, PollIntervalSeconds: 30, MarkSeen: true,
		PostActionIgnoreSkipped: true, MaxBodyChars: 12000, SubjectPrefix: "Re: ",
		VerifyDKIM: true, VerifySPF: true,
		MaxAttachmentSize: 2_000_000, MaxAttachmentsPerEmail: 5,
	}
}

// load reads channels.email over the defaults.
func load(cfg *config.Config) (Config, error) {
	return channels.Block(cfg, Name, Defaults)
}

// missing names the keys the channel cannot start without, nanobot's
// required fields: consent first.
func (c Config) missing() []string {
	var keys []string
	if !c.ConsentGranted {
		keys = append(keys, "channels.email.consentGranted (true, once the mailbox owner agreed that nanobot reads it)")
	}
	for _, k := range []struct{ name, value string }{
		{"imapHost", c.IMAPHost}, {"imapUsername", c.IMAPUsername}, {"imapPassword", c.IMAPPassword},
		{"smtpHost", c.SMTPHost}, {"smtpUsername", c.SMTPUsername}, {"smtpPassword", c.SMTPPassword},
	} {
		if strings.TrimSpace(k.value) == "" {
			keys = append(keys, "channels.email."+k.name)
		}
	}
	if c.PostAction == "move" && strings.TrimSpace(c.PostActionMoveMailbox) == "" {
		keys = append(keys, "channels.email.postActionMoveMailbox")
	}
	return keys
}

// validate rejects values the channel cannot run with.
func (c Config) validate() error {
	for _, p := range []struct {
		key  string
		port int
	}{{"imapPort", c.IMAPPort}, {"smtpPort", c.SMTPPort}} {
		if p.port <= 0 || p.port > 65535 {
			return fmt.Errorf("channels.email.%s %d is not a port (1-65535)", p.key, p.port)
		}
	}
	switch c.PostAction {
	case "", "delete", "move":
	default:
		return fmt.Errorf("channels.email.postAction %q is not one of \"delete\", \"move\" or null", c.PostAction)
	}
	if _, err := mail.ParseAddress(c.from()); err != nil {
		return fmt.Errorf("channels.email.fromAddress %q is not an address: %w", c.from(), err)
	}
	return nil
}

// from is the address replies come from: fromAddress, else the SMTP or
// IMAP login (nanobot's order).
func (c Config) from() string {
	for _, a := range []string{c.FromAddress, c.SMTPUsername, c.IMAPUsername} {
		if a = strings.TrimSpace(a); a != "" {
			return a
		}
	}
	return ""
}

// pollInterval is nanobot's interval, at least 5 seconds.
func (c Config) pollInterval() time.Duration {
	return time.Duration(max(5, c.PollIntervalSeconds)) * time.Second
}

func (c Config) mailbox() string {
	if m := strings.TrimSpace(c.IMAPMailbox); m != "" {
		return m
	}
	return "INBOX"
}

func (c Config) subjectPrefix() string {
	if c.SubjectPrefix == "" {
		return "Re: "
	}
	return c.SubjectPrefix
}

// allowFrom compares addresses as nanobot stores them: lower case.
func (c Config) allowFrom() channels.AllowFrom {
	out := make(channels.AllowFrom, 0, len(c.AllowFrom))
	for _, a := range c.AllowFrom {
		out = append(out, normalizeAddress(a))
	}
	return out
}

// selfAddresses are the channel's own addresses: mail from them is never answered.
func (c Config) selfAddresses() map[string]bool {
	out := map[string]bool{}
	for _, a := range []string{c.FromAddress, c.SMTPUsername, c.IMAPUsername} {
		if n := normalizeAddress(a); n != "" {
			out[n] = true
		}
	}
	return out
}

// normalizeAddress is an address for comparing: the bare address
// ("Bob <bob@x>" → "bob@x"), lower case; anything else lowered as it is.
func normalizeAddress(v string) string {
	v = strings.TrimSpace(v)
	if a, err := mail.ParseAddress(v); err == nil {
		return strings.ToLower(a.Address)
	}
	return strings.ToLower(v)
}
