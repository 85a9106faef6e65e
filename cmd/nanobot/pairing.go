package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/nanobot-durable/nanobot/activities"
)

// pairing manages who may talk to the agent from a chat app: list the
// pending codes and approved senders, approve or deny a code, revoke a sender.
func (a *app) pairing(ctx context.Context, args []string) error {
	fs := a.flags("pairing")
	fs.Usage = func() {
		fmt.Fprintln(a.stderr, "usage: nanobot pairing list | approve CODE | deny CODE | revoke ID")
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	rest := fs.Args()
	verb := "list"
	if len(rest) > 0 {
		verb = rest[0]
	}
	switch {
	case verb == "list" && len(rest) <= 1:
	case (verb == "approve" || verb == "deny" || verb == "revoke") && len(rest) == 2:
	default:
		return usageError{fmt.Errorf("pairing: want list | approve CODE | deny CODE | revoke ID")}
	}
	_, st, err := a.openStores(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	out := activities.PairingCommand(st.Pairing, strings.Join(rest, " "))
	if strings.HasPrefix(out, "Cannot ") || strings.HasPrefix(out, "No approved sender") {
		return errors.New(out)
	}
	fmt.Fprintln(a.stdout, out)
	return nil
}
