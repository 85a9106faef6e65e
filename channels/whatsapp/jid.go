package whatsapp

import (
	"strings"

	"go.mau.fi/whatsmeow/types"

	"github.com/nanobot-durable/nanobot/channels"
)

// phoneDigits is a phone number as WhatsApp's JIDs write it: digits only,
// no "+", spaces, dashes or brackets, no @s.whatsapp.net or device part.
func phoneDigits(s string) string {
	s = strings.TrimSpace(s)
	if user, server, ok := strings.Cut(s, "@"); ok && (server == types.DefaultUserServer || server == "c.us") {
		s = user
	}
	s, _, _ = strings.Cut(s, ":") // a device: 15551234567:12
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			b.WriteRune(r)
		case r == '+' || r == ' ' || r == '-' || r == '(' || r == ')' || r == '.':
		default:
			return "" // not a phone number (a LID, a group)
		}
	}
	return b.String()
}

// allowList is allowFrom as the manager compares it: phone numbers as bare
// digits; anything else ("*", a LID "…@lid") as written.
func allowList(entries []string) channels.AllowFrom {
	out := make(channels.AllowFrom, 0, len(entries))
	for _, e := range entries {
		if d := phoneDigits(e); d != "" {
			out = append(out, d)
			continue
		}
		out = append(out, strings.TrimSpace(e))
	}
	return out
}

// sameUser tells whether two JIDs are one account (any device of it).
func sameUser(a, b types.JID) bool {
	return !a.IsEmpty() && !b.IsEmpty() && a.User == b.User && a.Server == b.Server
}

// userJID is the account a device JID belongs to.
func userJID(j types.JID) types.JID { return j.ToNonAD() }

// isLID tells whether a JID is a hidden-number LID.
func isLID(j types.JID) bool { return j.Server == types.HiddenUserServer }

// chatID is the chat's JID as routes carry it (15551234567@s.whatsapp.net,
// 1203…@g.us, 1234…@lid).
func chatID(j types.JID) string { return userJID(j).String() }

// parseChat reads a route's chat id back; a bare phone number is a DM.
func parseChat(id string) (types.JID, bool) {
	id = strings.TrimSpace(id)
	if !strings.Contains(id, "@") {
		d := phoneDigits(id)
		if d == "" {
			return types.JID{}, false
		}
		return types.NewJID(d, types.DefaultUserServer), true
	}
	id = strings.Replace(id, "@lid.whatsapp.net", "@"+types.HiddenUserServer, 1)
	j, err := types.ParseJID(id)
	if err != nil || j.User == "" {
		return types.JID{}, false
	}
	switch j.Server {
	case types.DefaultUserServer, types.GroupServer, types.HiddenUserServer:
		return userJID(j), true
	}
	return types.JID{}, false
}
