package activities

import (
	"context"
	"fmt"
	"strings"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/pairing"
	"github.com/nanobot-durable/nanobot/protocol"
)

const pairingUsage = "Usage: /pairing [list] | approve CODE | deny CODE | revoke ID"

// cmdPairing lets the owner manage who may talk to the agent: only a sender
// allowFrom names (or the CLI) may, not one let in by pairing itself.
func (c *Commands) cmdPairing(_ context.Context, in protocol.StepInput, args string) (string, error) {
	if c.config == nil {
		return "Pairing is not available in this worker.", nil
	}
	cfg := c.config()
	r := in.Message.Route
	if !channels.AllowFromFor(cfg, r.Channel).Allows(r.SenderID) {
		return "Only a user listed in allowFrom can manage pairing.", nil
	}
	store := c.pairing
	if store == nil {
		store = pairing.NewStore(config.ConfigDir(cfg.Path))
	}
	return PairingCommand(store, args), nil
}

// PairingCommand runs "list | approve CODE | deny CODE | revoke ID" on the
// store and says what happened; the CLI's `nanobot pairing` uses it too.
func PairingCommand(store *pairing.Store, args string) string {
	verb, arg, _ := strings.Cut(strings.TrimSpace(args), " ")
	arg = strings.TrimSpace(arg)
	switch {
	case verb == "" || verb == "list":
		return pairingList(store)
	case (verb == "approve" || verb == "deny" || verb == "revoke") && arg == "":
		return pairingUsage
	case verb == "approve":
		r, err := store.Approve(arg)
		if err != nil {
			return fmt.Sprintf("Cannot approve %s: %v", arg, err)
		}
		return fmt.Sprintf("Approved %s:%s (code %s). Their next message reaches the agent.", r.Channel, r.SenderID, r.Code)
	case verb == "deny":
		r, err := store.Deny(arg)
		if err != nil {
			return fmt.Sprintf("Cannot deny %s: %v", arg, err)
		}
		return fmt.Sprintf("Denied %s:%s (code %s).", r.Channel, r.SenderID, r.Code)
	case verb == "revoke":
		n, err := store.Revoke(arg)
		if err != nil {
			return fmt.Sprintf("Cannot revoke %s: %v", arg, err)
		}
		if n == 0 {
			return fmt.Sprintf("No approved sender matches %q.", arg)
		}
		return fmt.Sprintf("Revoked %d approved sender(s) matching %q.", n, arg)
	}
	return pairingUsage
}

func pairingList(store *pairing.Store) string {
	pending, approved, err := store.List()
	if err != nil {
		return fmt.Sprintf("Cannot read pairing state: %v", err)
	}
	var b strings.Builder
	if len(pending) == 0 {
		b.WriteString("No pending pairing requests.")
	} else {
		b.WriteString("Pending pairing requests:")
		for _, p := range pending {
			fmt.Fprintf(&b, "\n  %s  %s:%s (chat %s), expires %s", p.Code, p.Channel, p.SenderID, p.ChatID, p.Expires.Format("15:04:05"))
		}
	}
	if len(approved) == 0 {
		b.WriteString("\nNo senders approved by pairing.")
	} else {
		b.WriteString("\nApproved by pairing:")
		for _, ap := range approved {
			fmt.Fprintf(&b, "\n  %s:%s (since %s)", ap.Channel, ap.SenderID, ap.Approved.Format("2006-01-02 15:04"))
		}
	}
	return b.String()
}
