package devicestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"go.mau.fi/whatsmeow/store"
	"go.mau.fi/whatsmeow/types"
)

// lid_map pairs users (no device): a LID and a phone number belong to
// one user each, so a new pair replaces what either side was paired with.

// PutLIDMapping records that lid and pn are the same user.
func (c *Container) PutLIDMapping(ctx context.Context, lid, pn types.JID) error {
	if lid.Server != types.HiddenUserServer || pn.Server != types.DefaultUserServer {
		return fmt.Errorf("put LID mapping %s ↔ %s: want a %s and a %s JID", lid, pn, types.HiddenUserServer, types.DefaultUserServer)
	}
	return c.inTx(ctx, "put LID mapping", func(ctx context.Context) error {
		var stored string
		err := c.q(ctx).QueryRowContext(ctx, `SELECT pn FROM lid_map WHERE lid = ?`, lid.User).Scan(&stored)
		if err == nil && stored == pn.User {
			return nil // already known: most calls are
		} else if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("put LID mapping %s ↔ %s: %w", lid.User, pn.User, err)
		}
		if _, err := c.q(ctx).ExecContext(ctx, `DELETE FROM lid_map WHERE lid = ? OR pn = ?`, lid.User, pn.User); err != nil {
			return fmt.Errorf("put LID mapping %s ↔ %s: %w", lid.User, pn.User, err)
		}
		if _, err := c.q(ctx).ExecContext(ctx, `INSERT INTO lid_map (lid, pn) VALUES (?, ?)`, lid.User, pn.User); err != nil {
			return fmt.Errorf("put LID mapping %s ↔ %s: %w", lid.User, pn.User, err)
		}
		return nil
	})
}

// PutManyLIDMappings records many pairs in one transaction.
func (c *Container) PutManyLIDMappings(ctx context.Context, mappings []store.LIDMapping) error {
	return c.inTx(ctx, "put LID mappings", func(ctx context.Context) error {
		for _, m := range mappings {
			if err := c.PutLIDMapping(ctx, m.LID, m.PN); err != nil {
				return err
			}
		}
		return nil
	})
}

// GetPNForLID is the phone JID of lid's user, on lid's device; empty if
// unknown.
func (c *Container) GetPNForLID(ctx context.Context, lid types.JID) (types.JID, error) {
	pn, err := c.lookupLIDMap(ctx, `SELECT pn FROM lid_map WHERE lid = ?`, lid.User)
	if err != nil || pn == "" {
		return types.EmptyJID, err
	}
	return types.JID{User: pn, Device: lid.Device, Server: types.DefaultUserServer}, nil
}

// GetLIDForPN is the LID of pn's user, on pn's device; empty if unknown.
func (c *Container) GetLIDForPN(ctx context.Context, pn types.JID) (types.JID, error) {
	lid, err := c.lookupLIDMap(ctx, `SELECT lid FROM lid_map WHERE pn = ?`, pn.User)
	if err != nil || lid == "" {
		return types.EmptyJID, err
	}
	return types.JID{User: lid, Device: pn.Device, Server: types.HiddenUserServer}, nil
}

// GetManyLIDsForPNs maps each phone JID with a known LID to it (device
// kept); unknown ones are left out.
func (c *Container) GetManyLIDsForPNs(ctx context.Context, pns []types.JID) (map[types.JID]types.JID, error) {
	out := make(map[types.JID]types.JID, len(pns))
	err := c.inTx(ctx, "get LIDs", func(ctx context.Context) error {
		for _, pn := range pns {
			lid, err := c.GetLIDForPN(ctx, pn)
			if err != nil {
				return err
			}
			if !lid.IsEmpty() {
				out[pn] = lid
			}
		}
		return nil
	})
	return out, err
}

func (c *Container) lookupLIDMap(ctx context.Context, query, user string) (string, error) {
	var other string
	err := c.q(ctx).QueryRowContext(ctx, query, user).Scan(&other)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	} else if err != nil {
		return "", fmt.Errorf("LID map lookup of %s: %w", user, err)
	}
	return other, nil
}
