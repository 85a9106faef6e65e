package email

import (
	"regexp"
	"strings"
)

// notForTheAgent says why a mail must not be answered — an auto-reply, a
// bounce, a mailing list, our own mail — or "" for a mail a person sent.
// Answering any of them is how two robots mail each other forever.
func (c *Channel) notForTheAgent(m *parsedMail) string {
	h := m.header
	if c.self[m.from] {
		return "sent from the channel's own address"
	}
	if v := headerToken(h.Get("Auto-Submitted")); v != "" && v != "no" {
		return "an automatic mail (Auto-Submitted: " + v + ")"
	}
	for _, k := range []string{"X-Autoreply", "X-Autorespond", "X-Autoresponder"} {
		if h.Has(k) {
			return "an automatic reply (" + k + ")"
		}
	}
	switch headerToken(h.Get("Precedence")) {
	case "bulk", "junk", "list", "auto_reply":
		return "bulk mail (Precedence: " + headerToken(h.Get("Precedence")) + ")"
	}
	if h.Has("Return-Path") && strings.Trim(strings.TrimSpace(h.Get("Return-Path")), "<>") == "" {
		return "a bounce (empty Return-Path)"
	}
	local, _, _ := strings.Cut(m.from, "@")
	if local == "mailer-daemon" || local == "postmaster" {
		return "a bounce (from " + m.from + ")"
	}
	if m.report {
		return "a delivery or read report (multipart/report)"
	}
	for _, k := range []string{"List-Id", "List-Unsubscribe"} {
		if h.Has(k) {
			return "a mailing list (" + k + ")"
		}
	}
	return ""
}

// headerToken is a header's first word, lower case: "auto-replied; x=1" → "auto-replied".
func headerToken(v string) string {
	v, _, _ = strings.Cut(v, ";")
	return strings.ToLower(strings.TrimSpace(v))
}

var (
	spfPass  = regexp.MustCompile(`\bspf\s*=\s*pass\b`)
	dkimPass = regexp.MustCompile(`\bdkim\s*=\s*pass\b`)
)

// spoofed says which check of verifySpf/verifyDkim the receiving server's
// Authentication-Results did not pass, or "" (nanobot's anti-spoofing).
func (c *Channel) spoofed(m *parsedMail) string {
	var spf, dkim bool
	for _, v := range m.header.Values("Authentication-Results") {
		v = strings.ToLower(v)
		spf = spf || spfPass.MatchString(v)
		dkim = dkim || dkimPass.MatchString(v)
	}
	switch {
	case c.cfg.VerifySPF && !spf:
		return "SPF (no spf=pass in Authentication-Results; set verifySpf false where the server does not add it)"
	case c.cfg.VerifyDKIM && !dkim:
		return "DKIM (no dkim=pass in Authentication-Results; set verifyDkim false where the server does not add it)"
	}
	return ""
}
