package channels

import (
	"fmt"
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

// PairingText is what an unknown sender in a direct message is told.
func PairingText(code string) string {
	return fmt.Sprintf("🔒 I only talk to people my owner has approved.\n"+
		"Your pairing code is %s (valid for %d minutes).\n"+
		"Ask my owner to approve it: nanobot pairing approve %s (or /pairing approve %s in an approved chat).",
		code, int(pairing.CodeTTL.Minutes()), code, code)
}
