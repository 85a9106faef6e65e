package channels

import (
	"fmt"
	"slices"
	"strings"

	"github.com/nanobot-durable/nanobot/pairing"
)

// AllowFrom is nanobot's allow list: "*" lets everyone in; otherwise a
// sender ID ("id" or "id|username") matches an entry equal to it or to one
// of its parts. An empty list lets nobody in: pairing only.
type AllowFrom []string

// Allows tells whether the list lets the sender in.
func (l AllowFrom) Allows(senderID string) bool {
	for _, entry := range l {
		entry = strings.TrimSpace(entry)
		if entry == "*" || (entry != "" && pairing.SameSender(entry, senderID)) {
			return true
		}
	}
	return false
}

// Chat policies of nanobot's channels (groupPolicy, dm.policy): "open"
// takes every message, "allowlist" those of listed chats or senders,
// "mention" those that @-mention the bot.
const (
	PolicyOpen      = "open"
	PolicyAllowlist = "allowlist"
	PolicyMention   = "mention"
)

// Distinct are the values trimmed, without blanks and repeats, in order:
// a sender's ids, a list of tokens.
func Distinct(values ...string) []string {
	var out []string
	for _, v := range values {
		if v = strings.TrimSpace(v); v != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// PairingText is what an unknown sender in a direct message is told.
func PairingText(code string) string {
	return fmt.Sprintf("🔒 I only talk to people my owner has approved.\n"+
		"Your pairing code is %s (valid for %d minutes).\n"+
		"Ask my owner to approve it: nanobot pairing approve %s (or /pairing approve %s in an approved chat).",
		code, int(pairing.CodeTTL.Minutes()), code, code)
}
